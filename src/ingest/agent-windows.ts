/**
 * Windows the agent itself reports (DESIGN §5, issue 34 §1): the number it judges its own context
 * against, which wins over the catalog (a workspace override still wins over it).
 * Where each agent reports it is its profile's `telemetry.window` (src/model/agents/):
 * - On the call: Qwen Code's `qwen-code.context.usage` (a JSON string on every
 *   `qwen-code.llm_request` span) with `window_size_tokens`; GitHub Copilot CLI's
 *   `github.copilot.session.usage_info` events (on its `invoke_agent` span, the ancestor of the
 *   calls of its run) with `github.copilot.token_limit`. Read by ./spans.ts.
 * - Apart from the calls: a `rotscope.window` span (rotscope's Claude Code hooks send the
 *   status line's `model.id` and `context_window.context_window_size`, src/cli/guard.ts; the
 *   `@rotscope/sdk` reports the Agent SDK's `modelUsage[model].contextWindow`) names a
 *   conversation, a model and its window. The receiver stores it (src/store/agent-windows.ts):
 *   the conversation's calls of that model, stored before or after, get it (source `agent`).
 */
import { AGENT_PROFILES, type AgentProfile } from '../model/agents/index.ts';
import type { ReportedWindow } from '../model/calls.ts';
import type { Attributes, Span } from '../model/telemetry.ts';
import { json, num, str } from './attrs.ts';

/** The span that reports a window apart from the calls. */
export const WINDOW_SPAN_NAME = 'rotscope.window';

/** A window as the agents report it: a positive whole number of tokens, else null. */
function tokens(v: unknown): number | null {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
}

/** True for a `rotscope.window` span (stored as a window, not as a span of GenAI interest). */
export function isWindowSpan(span: Span): boolean {
  return span.name === WINDOW_SPAN_NAME && span.attributes['rotscope.window.tokens'] !== undefined;
}

/** The window a `rotscope.window` span reports, or null when it names no conversation, model or window. */
export function reportedWindowOf(workspaceId: string, span: Span): ReportedWindow | null {
  const a = span.attributes;
  const conversationId = str(a, 'gen_ai.conversation.id') ?? str(a, 'session.id');
  const model = str(a, 'rotscope.window.model');
  const window = tokens(a['rotscope.window.tokens']);
  if (conversationId === null || model === null || window === null) return null;
  return {
    workspaceId,
    conversationId,
    model,
    window,
    reporter: str(a, 'rotscope.window.reporter') ?? 'agent',
    atNs: span.endTimeUnixNano,
  };
}

const WINDOWS = (AGENT_PROFILES as readonly AgentProfile[]).flatMap((p) =>
  p.telemetry?.window !== undefined ? [p.telemetry.window] : [],
);
const ON_CALL = WINDOWS.flatMap((w) => (w.onCall !== undefined ? [w.onCall] : []));
const ON_RUN_EVENT = WINDOWS.flatMap((w) => (w.onRunEvent !== undefined ? [w.onRunEvent] : []));

/**
 * The window an agent reports on its own LLM span (`onCall`: Qwen Code's
 * `qwen-code.context.usage` → `window_size_tokens`), else null.
 */
export function callReportedWindow(attrs: Attributes): number | null {
  for (const at of ON_CALL) {
    const usage = attrs[at.attribute];
    if (typeof usage === 'string') {
      const v = json(usage);
      if (typeof v === 'object' && v !== null && !Array.isArray(v))
        return tokens((v as Record<string, unknown>)[at.field]);
    }
  }
  return null;
}

/**
 * The window an agent reports in events of the span of its run (`onRunEvent`: GitHub Copilot
 * CLI's `invoke_agent` span, the last `github.copilot.session.usage_info` event's
 * `github.copilot.token_limit`), else null.
 */
export function eventReportedWindow(span: Span): number | null {
  let found: number | null = null;
  for (const event of span.events)
    for (const at of ON_RUN_EVENT) {
      if (event.name !== at.event) continue;
      found = tokens(num(event.attributes, at.attribute)) ?? found;
    }
  return found;
}
