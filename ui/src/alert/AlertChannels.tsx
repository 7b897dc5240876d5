/**
 * The channels the alert sends to, each with the minimum severity a finding needs, and a test
 * send per channel (POST /api/channels/:id/test: a made-up finding, answered with the outcome).
 */
import { useState } from 'react';
import { api, useApi } from '../api.ts';
import { ErrorMessage, Loading } from '../components/Status.tsx';
import { href } from '../router.ts';
import { SEVERITIES, type Channel, type Draft, type Severity, type TestResult } from './model.ts';

type Attached = Draft['channels'];

function TestSend({ channel }: { channel: Channel }) {
  const [state, setState] = useState<{ sending: boolean; result?: TestResult; error?: Error }>({
    sending: false,
  });
  const send = async () => {
    setState({ sending: true });
    try {
      const result = await api<TestResult>(`/api/channels/${encodeURIComponent(channel.id)}/test`, {
        method: 'POST',
      });
      setState({ sending: false, result });
    } catch (error) {
      setState({ sending: false, error: error as Error });
    }
  };
  const { result } = state;
  return (
    <span className="test-send">
      <button type="button" className="secondary" disabled={state.sending} onClick={send}>
        {state.sending ? 'Sending…' : 'Test send'}
      </button>
      {result && (
        <span className={result.ok ? 'ok' : 'error'} role="status">
          {result.ok
            ? `Sent${result.code !== undefined ? ` (${result.code})` : ''}`
            : `Failed (${result.status}${result.code !== undefined ? `, ${result.code}` : ''}): ${result.error ?? ''}`}
        </span>
      )}
      {state.error && (
        <span className="error" role="alert">
          {state.error.message}
        </span>
      )}
    </span>
  );
}

export function AlertChannels(props: {
  attached: Attached;
  errors: string[];
  onChange: (attached: Attached) => void;
}) {
  const { attached, errors, onChange } = props;
  const channels = useApi<{ items: Channel[] }>('/api/channels?limit=200');
  if (channels.loading && !channels.data) return <Loading what="channels" />;
  if (channels.error) return <ErrorMessage error={channels.error} />;
  const items = channels.data?.items ?? [];
  const toggle = (id: string, on: boolean) =>
    onChange(
      on ? [...attached, { id, minSeverity: 'warning' }] : attached.filter((a) => a.id !== id),
    );
  const setSeverity = (id: string, minSeverity: Severity) =>
    onChange(attached.map((a) => (a.id === id ? { ...a, minSeverity } : a)));
  return (
    <div className="alert-channels">
      {items.length === 0 ? (
        <p className="muted">
          No channels yet. <a href={href(['channels'])}>Create a webhook, Slack or email channel</a>
          , then attach it here.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Send to</th>
              <th>Channel</th>
              <th>Minimum severity</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((channel) => {
              const on = attached.find((a) => a.id === channel.id);
              return (
                <tr key={channel.id} data-channel={channel.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Send to ${channel.name}`}
                      checked={on !== undefined}
                      onChange={(event) => toggle(channel.id, event.target.checked)}
                    />
                  </td>
                  <td>
                    {channel.name} <span className="muted">({channel.type})</span>
                  </td>
                  <td>
                    <select
                      aria-label={`Minimum severity for ${channel.name}`}
                      disabled={!on}
                      value={on?.minSeverity ?? 'warning'}
                      onChange={(event) => setSeverity(channel.id, event.target.value as Severity)}
                    >
                      {SEVERITIES.map((s) => (
                        <option key={s} value={s}>
                          {s}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <TestSend channel={channel} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {errors.map((message) => (
        <p key={message} className="error" role="alert">
          {message}
        </p>
      ))}
    </div>
  );
}
