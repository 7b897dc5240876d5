/**
 * Findings as the real-CLI scenarios (Claude Code, Codex, Gemini CLI) compare them: detector,
 * severity, kind and the tool named, read from the JSON API or `rotscope analyze --json`, sorted
 * so that two lists compare whatever their order, and read once the evaluator has settled.
 */

/** A finding as compared: detector, severity, kind, and the tool it names (if any). */
export interface Seen {
  detector: string;
  severity: string;
  kind: string | null;
  tool: string | null;
}

/** A finding as the JSON API and `rotscope analyze --json` give it. */
export interface RawFinding {
  detector: string;
  severity: string;
  kind?: string | null;
  summary: string;
  details: Record<string, unknown>;
}

export function seen(f: RawFinding): Seen {
  const d = f.details;
  const tool = (d.tool ?? d.toolName ?? null) as string | null;
  return { detector: f.detector, severity: f.severity, kind: f.kind ?? null, tool };
}

const order = (a: Seen, b: Seen) =>
  JSON.stringify([a.detector, a.severity, a.kind, a.tool]).localeCompare(
    JSON.stringify([b.detector, b.severity, b.kind, b.tool]),
  );
export const sorted = (list: Seen[]) => [...list].sort(order);

/** `detector/severity[/kind][ tool]`, for summaries. */
export const describeSeen = (list: Seen[]) =>
  list.length === 0
    ? '(none)'
    : sorted(list)
        .map(
          (s) =>
            `${s.detector}/${s.severity}${s.kind ? `/${s.kind}` : ''}${s.tool ? ` ${s.tool}` : ''}`,
        )
        .join(', ');

export const sameSeen = (a: Seen[], b: Seen[]) =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

/** The conversation's findings from the JSON API of the server at `serverUrl`. */
export async function findingsOf(serverUrl: string, sessionId: string): Promise<RawFinding[]> {
  const res = await fetch(`${serverUrl}/api/findings?conversationId=${sessionId}&limit=200`);
  if (res.status !== 200) throw new Error(`GET /api/findings: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { items: RawFinding[] }).items;
}

/**
 * The conversation's findings once the server says nothing of it awaits evaluation
 * (`evaluation.pending` of `GET /api/conversations/:id` is false): call it after the producer
 * has exported everything (its process exited, its exporter flushed). Polls that status, not
 * the findings, so it returns as soon as the evaluator has judged what is stored; fails after
 * `timeoutMs` with the last status. `atLeast`: also wait (within the timeout) for that many
 * findings, for a producer whose last export may still be on its way after its exit.
 */
export async function settledFindings(
  serverUrl: string,
  conversationId: string,
  options: { timeoutMs?: number; atLeast?: number } = {},
): Promise<RawFinding[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    await evaluationSettled(serverUrl, conversationId, Math.max(0, deadline - Date.now()));
    const findings = await findingsOf(serverUrl, conversationId);
    // a producer whose last export is still on its way (relayed after its exit): wait for it
    if (findings.length >= (options.atLeast ?? 0) || Date.now() > deadline) return findings;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once the conversation exists and has no evaluation pending (see settledFindings). */
export async function evaluationSettled(
  serverUrl: string,
  conversationId: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    const res = await fetch(`${serverUrl}/api/conversations/${encodeURIComponent(conversationId)}`);
    const body = await res.text();
    if (res.status === 200) {
      const evaluation = (JSON.parse(body) as { evaluation: { pending: boolean } }).evaluation;
      if (!evaluation.pending) return;
      last = JSON.stringify(evaluation);
    } else last = `${res.status} ${body.slice(0, 200)}`;
    if (Date.now() > deadline)
      throw new Error(`conversation ${conversationId} not settled after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
