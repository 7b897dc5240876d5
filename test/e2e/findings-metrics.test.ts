/**
 * `rotscope serve` (a real child process, so main.ts's wiring is what runs) counts findings on
 * GET /metrics: `rotscope_findings_created_total{detector, severity}` when its evaluator
 * creates one, `rotscope_findings_escalated_total{detector}` when it raises one to critical,
 * `rotscope_evaluator_batches_total` for the transactions its evaluations committed in,
 * after the commit. Both backends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { scrapeFindingCounters } from '../helpers/finding-counters.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { createTestDatabase } from '../helpers/store.ts';

let server: ChildServer;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-findings-metrics-'));
  const url = await createTestDatabase();
  server = await startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
}, 300_000);
afterAll(async () => {
  server?.process.kill('SIGTERM');
  await server?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

async function send(spans: unknown[]): Promise<void> {
  const response = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(jsonRequest(spans)),
  });
  if (response.status !== 200)
    throw new Error(
      `POST /v1/traces: ${response.status} ${await response.text()}\n${server.output().slice(-3000)}`,
    );
}

const call = (traceId: string, conversation: string, share: number, finish: string, at: bigint) =>
  jsonSpan({
    traceId,
    startNs: at,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': conversation,
      'gen_ai.usage.input_tokens': Math.round(128_000 * share),
      'gen_ai.usage.output_tokens': 100,
      'gen_ai.response.finish_reasons': finish,
    },
  });

/** Polls GET /api/findings until `done` holds for its items. */
async function findingsUntil(
  done: (items: Array<{ detector: string; severity: string }>) => boolean,
): Promise<Array<{ detector: string; severity: string }>> {
  for (;;) {
    const { items } = (await (await fetch(`${server.url}/api/findings`)).json()) as {
      items: Array<{ detector: string; severity: string }>;
    };
    if (done(items)) return items;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('finding counters on /metrics', () => {
  it('counts a created finding by detector and severity, and an escalation', async () => {
    const before = await scrapeFindingCounters(server.url);
    // Every series exists at 0 before any finding.
    expect(
      before['rotscope_findings_created_total{detector="tool_takeover",severity="info"}'],
    ).toBe(0);
    expect(before['rotscope_findings_escalated_total{detector="history_lost"}']).toBe(0);
    expect(Object.values(before).every((value) => value === 0)).toBe(true);

    const base = BigInt(Date.now()) * 1_000_000n;
    const run = hex(16);
    // 75% of the window: context_too_full, warning. A cut-off answer elsewhere: output_cut_off.
    await send([
      call(run, 'metrics-a', 0.75, 'stop', base),
      call(hex(16), 'metrics-b', 0.1, 'length', base),
    ]);
    const first = await findingsUntil((items) => items.length >= 2);
    const cutOff = first.find((f) => f.detector === 'output_cut_off')!;
    expect(first.find((f) => f.detector === 'context_too_full')?.severity).toBe('warning');

    // Later in the same run, 95%: the same finding is raised to critical (an escalation).
    await send([call(run, 'metrics-a', 0.95, 'stop', base + 1_000_000_000n)]);
    await findingsUntil((items) =>
      items.some((f) => f.detector === 'context_too_full' && f.severity === 'critical'),
    );

    // Counted after the commit that the API read: poll the scrape until it shows it.
    const expected = {
      ...before,
      'rotscope_findings_created_total{detector="context_too_full",severity="warning"}': 1,
      [`rotscope_findings_created_total{detector="output_cut_off",severity="${cutOff.severity}"}`]: 1,
      'rotscope_findings_escalated_total{detector="context_too_full"}': 1,
    };
    let counters: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      counters = await scrapeFindingCounters(server.url);
      if (counters['rotscope_findings_escalated_total{detector="context_too_full"}'] === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(counters).toEqual(expected);

    // the evaluator's batches: at least one, never more than the evaluations they committed
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const batches = Number(/^rotscope_evaluator_batches_total (\S+)$/m.exec(text)?.[1]);
    const evaluations = [...text.matchAll(/^rotscope_evaluations_total\{calls="\w+"\} (\S+)$/gm)]
      .map((match) => Number(match[1]))
      .reduce((a, b) => a + b, 0);
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(evaluations);
  }, 300_000);
});
