/**
 * "What was lost" at one drop: one line with the tokens lost and the parts that lost the most;
 * the dropped messages (their text only when the content was captured); what replaced them;
 * the system prompt before and after.
 */
import { useApi } from '../api.ts';
import { ErrorMessage, Loading } from '../components/Status.tsx';
import { formatShare, formatTokens, severityClass } from '../format.ts';
import { href } from '../router.ts';
import { evidenceLabel, lostPartLabel } from './labels.ts';
import type { WhatWasLost as Detail } from './types.ts';
import { plural } from '../../../src/model/plural.ts';

/**
 * Where the drop sits: the calls before and after, by their strip numbers when known, and
 * whether the strip is one run's (the call before the drop may then be in another run).
 */
export interface DropPlace {
  beforeCall: number | null;
  afterCall: number | null;
  inRun?: boolean;
}

const MESSAGE_PREVIEW = 1_200;

function sizeUnit(unit: string | null, estimated: boolean): string {
  if (unit === 'tokens') return estimated ? 'tokens (estimated)' : 'tokens';
  return unit === 'chars' ? 'characters' : '';
}

export function WhatWasLost({ findingId, place }: { findingId: string; place: DropPlace }) {
  const { data, error, loading } = useApi<Detail>(
    `/api/findings/${encodeURIComponent(findingId)}/what-was-lost`,
  );
  if (loading && !data) return <Loading what="what was lost" />;
  if (error) return <ErrorMessage error={error} />;
  if (!data) return null;
  return (
    <section
      className={`what-was-lost drop-${data.kind} ${severityClass(data.severity)}`}
      aria-label="What was lost"
    >
      <h2>
        What was lost{' '}
        <span className={`badge ${severityClass(data.severity)}`}>
          {data.kind === 'compacted' ? 'compacted' : 'lost, no compaction marker'}
        </span>
      </h2>
      <p className="lost-line">
        <strong>{formatTokens(data.tokensLost)} tokens lost</strong>
        {data.dropRatio !== null ? ` (−${formatShare(data.dropRatio)})` : ''}
        {place.beforeCall !== null && place.afterCall !== null
          ? ` between call #${place.beforeCall} and call #${place.afterCall}`
          : ''}
        : {formatTokens(data.before.tokens)} → {formatTokens(data.after.tokens)}
        {data.partsLost.length > 0
          ? `; most from ${data.partsLost
              .slice(0, 3)
              .map((p) => `${lostPartLabel(p)} (${formatTokens(p.tokens)})`)
              .join(', ')}`
          : '; the parts are not known'}
        .
      </p>
      {place.inRun && place.beforeCall === null && (
        <p className="muted">
          The call before this drop is in another run of the conversation:{' '}
          <a href={href(['conversations', data.conversationId, 'strip'], { finding: findingId })}>
            see the drop on the conversation’s strip
          </a>
          .
        </p>
      )}

      <h3>Dropped messages</h3>
      {data.dropped.contentCaptured ? (
        data.dropped.messages.length === 0 ? (
          <p className="muted">No whole message was dropped: the messages shrank in place.</p>
        ) : (
          <>
            <p className="muted">
              {plural(data.dropped.count ?? data.dropped.messages.length, 'message')},{' '}
              {plural(data.dropped.chars ?? 0, 'character')}
              {data.dropped.count !== null && data.dropped.count > data.dropped.messages.length
                ? ` (the first ${data.dropped.messages.length} shown)`
                : ''}
              .
            </p>
            <ol className="dropped-messages">
              {data.dropped.messages.map((m, k) => (
                <li key={k}>
                  <div className="message-head">
                    <span className="role">{m.role}</span>
                    {m.tool && <span className="tool">{m.tool}</span>}
                    <span className="muted">{plural(m.chars, 'character')}</span>
                  </div>
                  {m.text !== null && (
                    <pre className="message-text">
                      {m.text.length > MESSAGE_PREVIEW
                        ? `${m.text.slice(0, MESSAGE_PREVIEW)}…`
                        : m.text}
                    </pre>
                  )}
                </li>
              ))}
            </ol>
          </>
        )
      ) : (
        <p className="not-captured">
          Content was not captured: the producer did not send the messages or this workspace does
          not keep them, so only sizes are known.
          {data.partsLost.length > 0 &&
            ` Lost: ${data.partsLost
              .map((p) => `${lostPartLabel(p)} ${formatTokens(p.tokens)} tokens`)
              .join(', ')}.`}
        </p>
      )}

      <h3>What replaced it</h3>
      {data.replacement ? (
        <div className="replacement">
          <p>
            A compaction{data.replacement.trigger ? ` (${data.replacement.trigger})` : ''}, seen
            from {evidenceLabel(data.replacement.evidence)}
            {data.replacement.tokensBefore !== null || data.replacement.tokensAfter !== null
              ? `: ${formatTokens(data.replacement.tokensBefore)} → ${formatTokens(data.replacement.tokensAfter)} tokens`
              : ''}
            {data.replacement.messagesKept !== null
              ? `, ${plural(data.replacement.messagesKept, 'message')} kept`
              : ''}
            .
          </p>
          {data.replacement.summary !== null ? (
            <pre className="message-text summary">{data.replacement.summary}</pre>
          ) : (
            <p className="muted">
              {data.replacement.summarySize !== null
                ? `Its summary (${plural(data.replacement.summarySize, 'character')}) was not captured.`
                : 'The producer sent no summary.'}
            </p>
          )}
        </div>
      ) : (
        <p className="muted">
          Nothing: no compaction was recorded between these calls. If your agent compacts, mark it
          (a compaction span or event) so the drop reads as compacted.
        </p>
      )}

      <h3>System prompt</h3>
      <SystemPrompt detail={data} />
    </section>
  );
}

function SystemPrompt({ detail }: { detail: Detail }) {
  const s = detail.systemPrompt;
  const unit = sizeUnit(s.unit, s.estimated);
  const sizes =
    s.before !== null || s.after !== null
      ? `before ${formatTokens(s.before)}, after ${formatTokens(s.after)} ${unit}`.trim()
      : null;
  if (!s.recorded)
    return (
      <p>
        Claude Code does not record its system prompt.{' '}
        {sizes
          ? `Its size, from beta tracing’s system_prompt_length: ${sizes}.`
          : 'Its size is known only with beta tracing (system_prompt_length).'}
      </p>
    );
  return (
    <div className="system-prompt">
      <p>
        {sizes ? `${sizes}.` : 'Its size is not known.'}
        {s.change === 'vanished' && ' It vanished.'}
        {s.change === 'shrank' && ' It shrank.'}
        {s.change === 'unchanged' && ' Unchanged.'}
        {s.change === 'grew' && ' It grew.'}
      </p>
      {(s.textBefore !== null || s.textAfter !== null) && (
        <div className="prompt-pair">
          <div>
            <div className="muted">Before</div>
            <pre className="message-text">{s.textBefore ?? '(not captured)'}</pre>
          </div>
          <div>
            <div className="muted">After</div>
            <pre className="message-text">{s.textAfter ?? '(not captured)'}</pre>
          </div>
        </div>
      )}
    </div>
  );
}
