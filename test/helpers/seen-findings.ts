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

/** The session's findings once they have not changed for 3 s (the evaluator settled it). */
export async function settledFindings(serverUrl: string, sessionId: string): Promise<RawFinding[]> {
  let last = '';
  let stableSince = Date.now();
  for (;;) {
    const now = JSON.stringify(await findingsOf(serverUrl, sessionId));
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 3_000) {
      return JSON.parse(now) as RawFinding[];
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
