/** A share of calls as a thin bar and a percentage. */
import { formatShare } from '../format.ts';

export function ShareBar({ share, state }: { share: number; state: string }) {
  return (
    <span className={`share-bar sight-${state}`}>
      <span className="bar">
        <span style={{ width: `${Math.round(Math.min(1, share) * 100)}%` }} />
      </span>
      {formatShare(share)}
    </span>
  );
}
