/**
 * A channel's deliveries, newest first, with every attempt: when, the outcome, the HTTP status
 * or SMTP reply code, the error and how long it took; and when the next retry is due.
 */
import { useEffect } from 'react';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { usePaged } from '../paging.ts';
import { formatTime } from '../format.ts';
import { href } from '../router.ts';
import type { Delivery } from './types.ts';
import { LoadMore } from '../components/LoadMore.tsx';

/** `generation`: bump it to load the list again (Refresh). */
export function Deliveries({ channelId, generation }: { channelId: string; generation: number }) {
  const list = usePaged<Delivery>(`/api/deliveries?channelId=${channelId}&limit=20`);
  const { reload } = list;
  useEffect(() => {
    if (generation > 0) reload();
  }, [generation, reload]);
  if (list.error) return <ErrorMessage error={list.error} />;
  if (list.items.length === 0)
    return list.loading ? (
      <Loading what="deliveries" />
    ) : (
      <Empty>No deliveries yet: findings the alert sends to this channel appear here.</Empty>
    );
  return (
    <>
      <table className="deliveries">
        <thead>
          <tr>
            <th>Finding</th>
            <th>Event</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Next retry</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((delivery) => (
            <tr key={delivery.id} data-delivery={delivery.id}>
              <td>
                {delivery.findingId !== null ? (
                  <a href={href(['findings', delivery.findingId])}>finding {delivery.findingId}</a>
                ) : (
                  <a href={href(['coverage'])}>window unknown (notice {delivery.noticeId})</a>
                )}
                <div className="muted">{formatTime(delivery.createdAt)}</div>
              </td>
              <td>{delivery.event}</td>
              <td className={`delivery-${delivery.status}`}>{delivery.status}</td>
              <td>
                <ol className="attempts">
                  {delivery.attempts.map((attempt, index) => (
                    <li key={index}>
                      {formatTime(attempt.at)} · {attempt.outcome}
                      {attempt.statusCode !== null && <> · {attempt.statusCode}</>}
                      {attempt.error && <span className="error"> · {attempt.error}</span>} ·{' '}
                      {attempt.durationMs} ms
                    </li>
                  ))}
                </ol>
              </td>
              <td>
                {delivery.status === 'pending' && delivery.nextAttemptAt
                  ? formatTime(delivery.nextAttemptAt)
                  : '–'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <LoadMore list={list} label="Older deliveries" />
    </>
  );
}
