/** Window overrides: a model-id glob and the window its calls get, added and removed as rows. */
import type { Draft } from './model.ts';

type Overrides = Draft['windowOverrides'];

export function WindowOverrides(props: {
  rows: Overrides;
  errors: Record<number, string[]>;
  onChange: (rows: Overrides) => void;
}) {
  const { rows, errors, onChange } = props;
  const update = (i: number, patch: Partial<Overrides[number]>) =>
    onChange(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <div className="overrides">
      <p className="muted">
        Calls of a model whose id matches the glob (<code>*</code> any run of characters,{' '}
        <code>?</code> one; case-insensitive) are judged on this window instead of the built-in
        catalog’s. The first match wins.
      </p>
      {rows.length === 0 && <p className="muted">No overrides: the catalog’s windows apply.</p>}
      {rows.map((row, i) => (
        <div key={i} className="override-row" data-override={i}>
          <input
            aria-label={`Model glob ${i + 1}`}
            placeholder="claude-sonnet-4*"
            value={row.model}
            onChange={(event) => update(i, { model: event.target.value })}
          />
          <input
            aria-label={`Window tokens ${i + 1}`}
            placeholder="200000"
            inputMode="numeric"
            value={row.window}
            onChange={(event) => update(i, { window: event.target.value })}
          />
          <span className="muted">tokens</span>
          <button
            type="button"
            className="secondary"
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove
          </button>
          {errors[i]?.map((message) => (
            <p key={message} className="error override-error" role="alert">
              {message}
            </p>
          ))}
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => onChange([...rows, { model: '', window: '' }])}
      >
        Add override
      </button>
    </div>
  );
}
