/**
 * What the knobs on the page would have found over the stored calls of the last 7 days
 * (POST /api/alerts/context-rot/preview: the evaluator's detectors over the stored calls),
 * beside what the saved knobs find in the same calls, and a few runs to open.
 */
import { formatTime } from '../format.ts';
import { severityClass } from '../format.ts';
import { href } from '../router.ts';
import { DETECTOR_TITLES, SEVERITIES, type Preview } from './model.ts';
import { plural } from '../../../src/model/plural.ts';

export function PreviewPanel({ preview }: { preview: Preview }) {
  const before = new Map(preview.compared?.counts.map((c) => [c.detector, c.total]));
  return (
    <div className="preview" data-testid="preview">
      <p className="muted" data-testid="preview-scope">
        Replayed {plural(preview.scanned.calls, 'call')} in{' '}
        {plural(preview.scanned.conversations, 'conversation')} since {formatTime(preview.since)}{' '}
        (the last {plural(preview.days, 'day')}; at most{' '}
        {plural(preview.limits.conversations, 'conversation')} and{' '}
        {plural(preview.limits.calls, 'call')}, the most recent first).
      </p>
      {preview.truncated && (
        <p className="preview-truncated" role="status">
          Only part of the last {plural(preview.days, 'day')} was replayed: the counts cover the
          calls above, not all of them.
        </p>
      )}
      <table className="preview-counts">
        <thead>
          <tr>
            <th>Detector</th>
            {SEVERITIES.map((s) => (
              <th key={s} className={severityClass(s)}>
                {s}
              </th>
            ))}
            <th>With these knobs</th>
            {preview.compared && <th>With the saved knobs</th>}
          </tr>
        </thead>
        <tbody>
          {preview.counts.map((count) => (
            <tr key={count.detector} data-detector={count.detector}>
              <td>{DETECTOR_TITLES[count.detector]}</td>
              {SEVERITIES.map((s) => (
                <td key={s} data-severity={s}>
                  {count[s]}
                </td>
              ))}
              <td data-total>
                <strong>{count.total}</strong>
              </td>
              {preview.compared && <td className="muted">{before.get(count.detector) ?? 0}</td>}
            </tr>
          ))}
          <tr className="preview-total">
            <td>All</td>
            <td colSpan={SEVERITIES.length} />
            <td data-total>
              <strong>{preview.total}</strong>
            </td>
            {preview.compared && <td className="muted">{preview.compared.total}</td>}
          </tr>
        </tbody>
      </table>
      {preview.examples.length > 0 && (
        <>
          <h3>Runs it would flag</h3>
          <ul className="preview-examples">
            {preview.examples.map((example) => (
              <li key={`${example.detector}-${example.runId}`}>
                <span className={severityClass(example.severity)}>{example.severity}</span>{' '}
                <a href={href(['runs', example.runId])}>{DETECTOR_TITLES[example.detector]}</a>
                <span className="muted"> · {example.summary}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
