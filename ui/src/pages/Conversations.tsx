/**
 * Conversations, most recently active first: calls, the fullest call (share of its window),
 * models, sub-agents and side calls, findings and runs; searched by conversation, run or trace
 * id (`#/conversations?q=…`). `#/conversations/<id>` shows one conversation,
 * `#/conversations/<id>/strip` the context growth strip of all its calls (the run view's page).
 */
import { useEffect, useState } from 'react';
import { ConversationDetail } from '../conversations/ConversationDetail.tsx';
import { Fullness } from '../conversations/Fullness.tsx';
import { Streams } from '../conversations/Streams.tsx';
import type { ConversationSummary } from '../conversations/types.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { GettingStarted } from '../components/GettingStarted.tsx';
import { usePaged, withQuery } from '../paging.ts';
import { formatCost, formatTime, formatTokens, shortProject } from '../format.ts';
import { href, redirect, type Route } from '../router.ts';
import { LoadMore } from '../components/LoadMore.tsx';
import RunPage from './Run.tsx';

/** Runs listed in a row before "+N more". */
const RUNS_SHOWN = 3;

export default function ConversationsPage({ route }: { route: Route }) {
  const id = route.path[1];
  if (id !== undefined && route.path[2] === 'strip') return <RunPage route={route} />;
  if (id !== undefined) return <ConversationDetail id={id} finding={route.query.get('finding')} />;
  return <ConversationList query={route.query.get('q') ?? ''} />;
}

function ConversationList({ query }: { query: string }) {
  const [draft, setDraft] = useState(query);
  useEffect(() => setDraft(query), [query]);
  const list = usePaged<ConversationSummary>(
    withQuery('/api/conversations', { q: query, limit: '50' }),
  );
  return (
    <section className="conversations-page">
      <h1>Conversations</h1>
      <form
        className="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          redirect(['conversations'], { q: draft.trim() });
        }}
      >
        <label>
          Search
          <input
            type="search"
            value={draft}
            placeholder="conversation, run or trace id, or project"
            aria-label="Search by id"
            onChange={(event) => setDraft(event.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          Search
        </button>
      </form>
      <ErrorMessage error={list.error} />
      {list.items.length === 0 && list.loading && <Loading what="conversations" />}
      {list.items.length === 0 && !list.loading && !list.error && (
        <>
          <Empty>
            {query
              ? `No conversation, run or trace id or project contains “${query}”.`
              : 'No conversations yet.'}
          </Empty>
          {!query && <GettingStarted />}
        </>
      )}
      {list.items.length > 0 && (
        <table className="conversations">
          <thead>
            <tr>
              <th>Conversation</th>
              <th>Last call</th>
              <th>Calls</th>
              <th>Fullest call</th>
              <th>Models</th>
              <th>Streams</th>
              <th>Findings</th>
              <th title="What the producer reported the calls cost (Claude Code does); – when it did not">
                Cost
              </th>
              <th>Runs</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((conversation) => (
              <tr key={conversation.id} data-conversation={conversation.id}>
                <td>
                  <a className="id" href={href(['conversations', conversation.id])}>
                    {conversation.id}
                  </a>
                  <div className="muted conversation-agent">
                    {conversation.agent ?? conversation.producers.join(', ')}
                  </div>
                  {conversation.project && (
                    <div className="muted conversation-project" title={conversation.project}>
                      {shortProject(conversation.project)}
                    </div>
                  )}
                  {conversation.guard && (
                    <div
                      className="muted conversation-guard"
                      title={conversation.guard.tools
                        .map((t) => `${t.tool}: ${t.narrowed} narrowed, ${t.warned} warned`)
                        .join('; ')}
                    >
                      guard: {conversation.guard.narrowed} narrowed, {conversation.guard.warned}{' '}
                      warned, {formatTokens(conversation.guard.keptOutTokens)} tokens kept out
                    </div>
                  )}
                </td>
                <td className="nowrap">{formatTime(conversation.lastCallAt)}</td>
                <td>{conversation.calls}</td>
                <td>
                  <Fullness
                    share={conversation.fullestShare}
                    tokens={conversation.maxContextTokens}
                    windowUnknown={conversation.windowUnknown}
                  />
                </td>
                <td>{conversation.models.join(', ') || '–'}</td>
                <td>
                  <Streams conversation={conversation} />
                </td>
                <td>
                  {conversation.findings > 0 ? (
                    <a href={href(['conversations', conversation.id])}>{conversation.findings}</a>
                  ) : (
                    <span className="muted">0</span>
                  )}
                </td>
                <td className="conversation-cost" data-cost={conversation.costUsd ?? ''}>
                  {formatCost(conversation.costUsd)}
                </td>
                <td>
                  <div className="runs">
                    {conversation.runs.slice(0, RUNS_SHOWN).map((run) => (
                      <a key={run.id} className="id" href={href(['runs', run.id])}>
                        {run.id}
                      </a>
                    ))}
                    {conversation.runCount > RUNS_SHOWN && (
                      <a className="muted" href={href(['conversations', conversation.id])}>
                        +{conversation.runCount - RUNS_SHOWN} more
                      </a>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <LoadMore list={list} label="Older conversations" />
    </section>
  );
}
