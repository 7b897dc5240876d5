/** The fullest call of a conversation: its share of the window, coloured as the status line is. */
import { formatShare, formatTokens, usageLevel } from '../format.ts';

export function Fullness({ share, tokens }: { share: number | null; tokens: number | null }) {
  if (share === null)
    return (
      <span className="muted" title="no call reported both its token count and its window">
        {tokens === null ? '–' : `${formatTokens(tokens)} tokens`}
      </span>
    );
  const level = usageLevel(share);
  return (
    <span className={`fullness usage-${level}`} title={`${formatTokens(tokens)} tokens`}>
      <span className="fullness-bar">
        <span style={{ width: `${Math.min(100, Math.round(share * 100))}%` }} />
      </span>
      {formatShare(share)}
    </span>
  );
}
