/**
 * A finding's acknowledgement, where the finding is read (the run view with it selected): who
 * looked at it said so, with a note. Not acknowledged yet: a note and a button; acknowledged:
 * when, the note, and a button to take it back. Both need an admin session; the API's refusal
 * (a read token's 403) is shown as it says it.
 */
import { useState } from 'react';
import { api, useAction, useApi } from '../api.ts';
import { ErrorMessage } from '../components/Status.tsx';
import { formatTime } from '../format.ts';
import type { Finding } from './types.ts';

export function Acknowledge({ findingId }: { findingId: string }) {
  const url = `/api/findings/${encodeURIComponent(findingId)}`;
  const { data, error, reload } = useApi<Finding>(url);
  const action = useAction();
  const [note, setNote] = useState('');
  if (error) return <ErrorMessage error={error} />;
  if (!data) return null;

  if (data.acknowledgedAt)
    return (
      <div className="acknowledgement acknowledged" aria-label="Acknowledgement">
        <p>
          <strong>Acknowledged</strong> {formatTime(data.acknowledgedAt)}:{' '}
          <span className="acknowledgement-note">{data.acknowledgedNote}</span>
        </p>
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              await api(`${url}/acknowledge`, { method: 'DELETE' });
              reload();
            })
          }
        >
          Take back
        </button>
        <ErrorMessage error={action.error} />
      </div>
    );

  return (
    <form
      className="acknowledgement"
      aria-label="Acknowledgement"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await api(`${url}/acknowledge`, { method: 'POST', body: { note } });
          setNote('');
          reload();
        });
      }}
    >
      <label>
        Note
        <textarea
          name="note"
          rows={2}
          maxLength={2000}
          value={note}
          placeholder="What was done or decided (a known limit, a fix under way, …)"
          onChange={(event) => setNote(event.target.value)}
        />
      </label>
      <button type="submit" disabled={action.busy || note.trim() === ''}>
        Acknowledge
      </button>
      <ErrorMessage error={action.error} />
    </form>
  );
}
