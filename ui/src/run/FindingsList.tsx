/** The run's findings beside the strip: each selects on the strip the calls its text names. */
import { formatTokens, severityClass } from '../format.ts';
import { findingTitle } from './labels.ts';
import { callsLabel, callsOf } from './strip-model.ts';
import type { StripFinding } from './types.ts';

export function FindingsList({
  findings,
  selected,
  onSelect,
}: {
  findings: StripFinding[];
  selected: string | null;
  onSelect: (findingId: string) => void;
}) {
  if (findings.length === 0) return <p className="muted">No findings for these calls.</p>;
  return (
    <ul className="run-findings">
      {findings.map((f) => (
        <li key={f.findingId} className={f.findingId === selected ? 'selected' : undefined}>
          <button type="button" className="link" onClick={() => onSelect(f.findingId)}>
            <span className={`badge ${severityClass(f.severity)}`}>{f.severity}</span>{' '}
            {findingTitle(f)}
            {f.index !== null ? ` · ${callsLabel(callsOf(f))}` : ''}
            {f.tokensLost !== null ? ` · −${formatTokens(f.tokensLost)}` : ''}
          </button>
          <div className="summary">{f.summary}</div>
        </li>
      ))}
    </ul>
  );
}
