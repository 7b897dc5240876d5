/**
 * `#/conversations/<id>`: one conversation's streams (main thread, sub-agents, side calls), its
 * runs (each opens the run view) and its findings; `?finding=<id>` marks one of them (where a
 * finding without a run lands).
 */
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { detectorLabel } from '../findings/detectors.ts';
import type { Finding } from '../findings/types.ts';
import { formatCost, formatTime, formatTokens, severityClass } from '../format.ts';
import { href } from '../router.ts';
import { Fullness } from './Fullness.tsx';
import type { ConversationSummary } from './types.ts';

export function ConversationDetail({ id, finding }: { id: string; finding: string | null }) {
  const found = useApi<{ items: ConversationSummary[] }>(
    `/api/conversations?q=${encodeURIComponent(id)}&limit=500`,
  );
  const findings = useApi<{ items: Finding[] }>(
    `/api/findings?conversationId=${encodeURIComponent(id)}&limit=200`,
  );
  const conversation = found.data?.items.find((item) => item.id === id);
  return (
    <section className="conversation-page">
      <p>
        <a href={href(['conversations'])}>← Conversations</a>
      </p>
      <h1>
        Conversation <code>{id}</code>
      </h1>
      <ErrorMessage error={found.error} />
      {found.loading && <Loading what="the conversation" />}
      {found.data && !conversation && <Empty>No conversation “{id}” in this workspace.</Empty>}
      {conversation && (
        <>
          <dl className="facts">
            <dt>Calls</dt>
            <dd>
              {conversation.calls}{' '}
              <a href={href(['conversations', id, 'strip'])}>context growth strip →</a>
            </dd>
            <dt>Fullest call</dt>
            <dd>
              <Fullness
                share={conversation.fullestShare}
                tokens={conversation.maxContextTokens}
                windowUnknown={conversation.windowUnknown}
              />
            </dd>
            <dt>Project</dt>
            <dd className="conversation-project">{conversation.project ?? '–'}</dd>
            <dt>Agent</dt>
            <dd>{conversation.agent ?? (conversation.producers.join(', ') || '–')}</dd>
            <dt>Cost</dt>
            <dd className="conversation-cost" data-cost={conversation.costUsd ?? ''}>
              {conversation.costUsd === null
                ? '– (no cost reported)'
                : `${formatCost(conversation.costUsd)} as reported`}
            </dd>
            <dt>Models</dt>
            <dd>{conversation.models.join(', ') || '–'}</dd>
            <dt>From</dt>
            <dd>
              {formatTime(conversation.firstCallAt)} to {formatTime(conversation.lastCallAt)}
            </dd>
          </dl>
          <h2>Streams</h2>
          <table className="streams-table">
            <thead>
              <tr>
                <th>Stream</th>
                <th>Kind</th>
                <th>Calls</th>
                <th>Side calls</th>
              </tr>
            </thead>
            <tbody>
              {conversation.streamList.map((stream) => (
                <tr key={stream.key}>
                  <td>
                    <code>{stream.agentId ?? stream.key}</code>
                  </td>
                  <td>
                    <span className={`tag ${stream.kind}`}>
                      {stream.kind === 'main' ? 'main thread' : 'sub-agent'}
                    </span>
                  </td>
                  <td>{stream.calls}</td>
                  <td>{stream.sideCalls || '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Runs</h2>
          <table className="runs-table">
            <thead>
              <tr>
                <th>Run</th>
                <th>Started</th>
                <th>Calls</th>
              </tr>
            </thead>
            <tbody>
              {conversation.runs.map((run) => (
                <tr key={run.id}>
                  <td>
                    <a className="id" href={href(['runs', run.id])}>
                      {run.id}
                    </a>
                  </td>
                  <td>{formatTime(run.firstCallAt)}</td>
                  <td>{formatTokens(run.calls)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {conversation.runCount > conversation.runs.length && (
            <p className="muted">
              and {conversation.runCount - conversation.runs.length} more runs
            </p>
          )}
        </>
      )}
      <h2>Findings</h2>
      <ErrorMessage error={findings.error} />
      {findings.data && findings.data.items.length === 0 && <Empty>No findings.</Empty>}
      {findings.data && findings.data.items.length > 0 && (
        <table className="findings">
          <tbody>
            {findings.data.items.map((item) => (
              <tr
                key={item.id}
                data-finding={item.id}
                className={item.id === finding ? 'selected' : undefined}
                aria-selected={item.id === finding}
              >
                <td className="nowrap">{formatTime(item.createdAt)}</td>
                <td className={severityClass(item.severity)}>{item.severity}</td>
                <td className="nowrap">{detectorLabel(item.detector)}</td>
                <td>
                  {item.runId ? (
                    <a href={href(['runs', item.runId], { finding: item.id })}>{item.summary}</a>
                  ) : (
                    item.summary
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
