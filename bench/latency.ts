/**
 * Detection latency (DESIGN §10): from the HTTP 200 of the batch holding a call to the commit
 * of the finding it causes, at a steady load of half the saturation rate measured in the
 * same run. Each request is one agent run (22 spans) whose last call is cut off.
 */
import pino from 'pino';
import { buildApp } from '../src/api/app.ts';
import { defaultConfig } from '../src/config.ts';
import { startBackgroundLoops } from '../src/loops.ts';
import { createTestStore } from '../test/helpers/store.ts';
import { agentRun, encodeBatch } from './genai-spans.ts';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export async function benchLatency(options: { seconds?: number } = {}) {
  const seconds = options.seconds ?? 15;
  const store = await createTestStore();
  const config = defaultConfig({ logLevel: 'silent', maxInflightIngest: 64 });
  const acknowledged = new Map<string, number>();
  const latencies: number[] = [];
  const built = await buildApp({ store, config });
  const loops = await startBackgroundLoops({
    store,
    config,
    log: pino({ level: 'silent' }),
    onEvaluated: (result) => {
      const at = acknowledged.get(result.conversationId);
      if (at !== undefined && result.findingsCreated > 0) {
        latencies.push(performance.now() - at);
        acknowledged.delete(result.conversationId);
      }
    },
  });
  const address = await built.app.listen({ host: '127.0.0.1', port: 0 });
  let run = 0;
  const send = async () => {
    const id = run++;
    const body = encodeBatch(
      agentRun(id, 10, BigInt(Date.now()) * 1_000_000n, { cutOffLast: true }),
    );
    const response = await fetch(`${address}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
    return { id, at: performance.now() };
  };

  // Saturation: as many requests as 8 concurrent exporters can push in 5 s.
  const saturationStart = performance.now();
  let saturated = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() - saturationStart < 5_000) {
        await send();
        saturated++;
      }
    }),
  );
  const saturationRps = saturated / ((performance.now() - saturationStart) / 1000);
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // let the evaluator catch up
  latencies.length = 0;
  acknowledged.clear();

  // Steady load at half the saturation rate, open loop (requests start on schedule).
  const rate = saturationRps / 2;
  const total = Math.max(10, Math.round(rate * seconds));
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inflight.push(send().then(({ id, at }) => void acknowledged.set(`bench-conv-${id}`, at)));
  }
  await Promise.all(inflight);
  const deadline = performance.now() + 30_000;
  while (latencies.length < total && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));

  await built.app.close();
  await loops.stop();
  await store.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    backend: store.kind,
    saturationRequestsPerSecond: Number(saturationRps.toFixed(1)),
    steadyRequestsPerSecond: Number(rate.toFixed(1)),
    findings: sorted.length,
    expected: total,
    p50Ms: Math.round(percentile(sorted, 50)),
    p99Ms: Math.round(percentile(sorted, 99)),
    quietPeriodMs: config.evaluatorQuietMs,
  };
}
