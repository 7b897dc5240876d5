/**
 * One channel: where it sends, a test send (its outcome, or the API's refusal: a private
 * destination says how to allow it), its "Allow private address" switch (webhook and email),
 * delete, and its deliveries.
 */
import { useState } from 'react';
import { api, useAction } from '../api.ts';
import { ErrorMessage } from '../components/Status.tsx';
import { formatTime } from '../format.ts';
import { Deliveries } from './Deliveries.tsx';
import { destinationOf, type Channel, type TestResult } from './types.ts';

export function ChannelCard({ channel, onDeleted }: { channel: Channel; onDeleted: () => void }) {
  const [test, setTest] = useState<{ at: Date; result: TestResult }>();
  const { busy, error, run } = useAction();
  const [generation, setGeneration] = useState(0);
  const [allowPrivate, setAllowPrivate] = useState(channel.config.allowPrivateAddress === true);

  // Turning it off while the destination is private is refused by the API, which says why.
  const togglePrivate = (allow: boolean) =>
    run(async () => {
      const updated = await api<Channel>(`/api/channels/${channel.id}`, {
        method: 'PATCH',
        body: { config: { allowPrivateAddress: allow ? true : null } },
      });
      setAllowPrivate(updated.config.allowPrivateAddress === true);
    });

  const sendTest = () =>
    run(async () => {
      setTest(undefined);
      const result = await api<TestResult>(`/api/channels/${channel.id}/test`, { method: 'POST' });
      setTest({ at: new Date(), result });
    });
  const remove = () =>
    run(async () => {
      if (!window.confirm(`Delete the channel “${channel.name}”?`)) return;
      await api(`/api/channels/${channel.id}`, { method: 'DELETE' });
      onDeleted();
    });

  return (
    <article className="channel" aria-label={`Channel ${channel.name}`} data-channel={channel.id}>
      <header>
        <h3>
          {channel.name} <span className="tag">{channel.type}</span>
        </h3>
        <span className="muted destination">{destinationOf(channel)}</span>
        <span className="actions">
          <button type="button" className="secondary" disabled={busy} onClick={sendTest}>
            Test send
          </button>
          <button type="button" className="danger" disabled={busy} onClick={remove}>
            Delete
          </button>
        </span>
      </header>
      {channel.type !== 'slack' && (
        <label className="check">
          <input
            type="checkbox"
            checked={allowPrivate}
            disabled={busy}
            onChange={(event) => void togglePrivate(event.target.checked)}
          />
          Allow private address
        </label>
      )}
      <ErrorMessage error={error} />
      {test && (
        <p
          className={test.result.ok ? 'test-result ok' : 'test-result error'}
          role="status"
          aria-label="test send result"
        >
          Test send at {formatTime(test.at.getTime())}:{' '}
          {test.result.ok
            ? 'delivered'
            : test.result.status === 'retry'
              ? 'failed, would be retried'
              : 'failed'}
          {test.result.code !== undefined && <> · status {test.result.code}</>}
          {test.result.error && <> · {test.result.error}</>} · {test.result.durationMs} ms · message{' '}
          <code>{test.result.messageId}</code>
        </p>
      )}
      <h4>
        Deliveries{' '}
        <button type="button" className="link" onClick={() => setGeneration((n) => n + 1)}>
          Refresh
        </button>
      </h4>
      <Deliveries channelId={channel.id} generation={generation} />
    </article>
  );
}
