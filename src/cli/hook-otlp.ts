/**
 * The hook's spans (./hook.ts) as OTLP/HTTP JSON, and the POST that sends one to the rotscope
 * server: the compaction span (DESIGN §5: role compaction, session.id as conversation) and the
 * session span (where the session runs), both on Claude Code's service and its session's trace,
 * with span ids derived from what they describe, so a span sent twice is stored once.
 */
import { createHash } from 'node:crypto';
import type { Env } from './hook-log.ts';
import { str } from './statusline.ts';
import { tokenOf } from './token-file.ts';

type Obj = Record<string, unknown>;

/** How long the server may take (ms) before the hook gives up, unless the env says otherwise. */
export const SERVER_TIMEOUT_MS = 1000;

/**
 * The hook's bound on the server (ms): ROTSCOPE_HOOK_TIMEOUT_MS when it is a positive whole
 * number (a server far away, or a loaded test machine), else {@link SERVER_TIMEOUT_MS}.
 */
export function serverTimeoutMs(env: Env): number {
  const set = Number(str(env.ROTSCOPE_HOOK_TIMEOUT_MS));
  return Number.isInteger(set) && set > 0 ? set : SERVER_TIMEOUT_MS;
}

const hex = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/** The compaction span as OTLP/HTTP JSON (DESIGN §5: role compaction, session.id as conversation). */
export function compactionSpan(c: {
  sessionId: string;
  key: string;
  startMs: number;
  endMs: number;
  trigger: string | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  summary: string | null;
  captureContent: boolean;
  cwd?: string | undefined;
}): unknown {
  const attributes: Array<{ key: string; value: Obj }> = [
    { key: 'gen_ai.operation.name', value: { stringValue: 'compaction' } },
    { key: 'session.id', value: { stringValue: c.sessionId } },
  ];
  const add = (key: string, value: string | number | null) => {
    if (value === null) return;
    attributes.push({
      key,
      value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value },
    });
  };
  add('rotscope.compaction.trigger', c.trigger);
  add('rotscope.compaction.tokens_before', c.tokensBefore);
  add('rotscope.compaction.tokens_after', c.tokensAfter);
  add('rotscope.compaction.summary_size', c.summary === null ? null : c.summary.length);
  if (c.captureContent) add('rotscope.compaction.summary', c.summary);
  return hookSpanBody({
    sessionId: c.sessionId,
    spanId: hex(`compaction:${c.sessionId}:${c.key}`, 16),
    name: 'rotscope.compaction',
    startMs: c.startMs,
    endMs: c.endMs,
    attributes,
    cwd: c.cwd,
  });
}

/** The session span (src/ingest/projects.ts): where the session runs, nothing else. */
export function sessionSpan(c: { sessionId: string; cwd: string; atMs: number }): unknown {
  return hookSpanBody({
    sessionId: c.sessionId,
    // one per session and directory: a resumed session sends the same span again, stored once
    spanId: hex(`session:${c.sessionId}:${c.cwd}`, 16),
    name: 'rotscope.session',
    startMs: c.atMs,
    endMs: c.atMs,
    attributes: [{ key: 'session.id', value: { stringValue: c.sessionId } }],
    cwd: c.cwd,
  });
}

/** One span of the hook's as OTLP/HTTP JSON: Claude Code's service, its session's trace. */
function hookSpanBody(s: {
  sessionId: string;
  spanId: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Array<{ key: string; value: Obj }>;
  cwd: string | undefined;
}): unknown {
  const ns = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
  const resource = [{ key: 'service.name', value: { stringValue: 'claude-code' } }];
  if (s.cwd !== undefined)
    resource.push({ key: 'process.working_directory', value: { stringValue: s.cwd } });
  return {
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [
          {
            scope: { name: 'rotscope-hook' },
            spans: [
              {
                traceId: hex(`session:${s.sessionId}`, 32),
                spanId: s.spanId,
                name: s.name,
                kind: 1,
                startTimeUnixNano: ns(s.startMs),
                endTimeUnixNano: ns(s.endMs),
                attributes: s.attributes,
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The span id of a span body made by {@link compactionSpan} or {@link sessionSpan}. */
export function spanIdOf(body: unknown): string {
  const span = (
    body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ spanId: string }> }> }> }
  ).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
  return span.spanId;
}

/** `path` on the server of ROTSCOPE_URL (set: the callers check). */
export const serverUrl = (env: Env, path: string) =>
  `${str(env.ROTSCOPE_URL)!.replace(/\/+$/, '')}${path}`;

/** POSTs the span to `${ROTSCOPE_URL}/v1/traces`; an error text on failure, else null. */
export async function sendSpan(body: unknown, env: Env): Promise<string | null> {
  const url = serverUrl(env, '/v1/traces');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = tokenOf(env);
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(serverTimeoutMs(env)),
    });
    if (response.ok) return null;
    return `${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`;
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return `${url} unreachable: ${(error as Error).message}${cause ? ` (${cause})` : ''}`;
  }
}
