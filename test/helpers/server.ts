/**
 * Starts rotscope in-process on 127.0.0.1:0 over a fresh test database, with real HTTP.
 * Background loops (evaluator, notifier) run unless disabled; the notifier's claim rounds are
 * counted: a test awaits `notifierPolls.after(n)` to know that nothing more was sent, instead of
 * sleeping.
 */
import { buildApp, type App } from '../../src/api/app.ts';
import type { Resolver } from '../../src/notifier/outbound.ts';
import { defaultConfig, type Config } from '../../src/config.ts';
import { startBackgroundLoops, type Loop } from '../../src/loops.ts';
import { CallMemo } from '../../src/store/call-memo.ts';
import pino from 'pino';
import { pollCounter, type PollCounter } from './poll-counter.ts';
import { createTestStore, type TestStore } from './store.ts';

export interface TestServer {
  url: string;
  store: TestStore;
  app: App;
  config: Config;
  /** The notifier's claim rounds (none when loops or the notifier are off). */
  notifierPolls: PollCounter;
  /** The evaluator's memory of new calls (src/store/call-memo.ts); none when it does not run. */
  callMemo: CallMemo | undefined;
  close(): Promise<void>;
}

export async function startTestServer(
  options: {
    config?: Partial<Config>;
    loops?: boolean;
    store?: TestStore;
    /** Answers the API's host-name lookups (channel destination checks) in place of DNS. */
    resolveHost?: Resolver;
    /** False: the evaluator reads every call back, as without the memory of new calls. */
    callMemo?: boolean;
  } = {},
): Promise<TestServer> {
  const store = options.store ?? (await createTestStore());
  const config = defaultConfig({ evaluatorQuietMs: 100, evaluatorPollMs: 50, ...options.config });
  // as `rotscope serve` wires it, every evaluation from memory checked against the stored rows
  const callMemo =
    options.loops === false || !config.evaluator || options.callMemo === false
      ? undefined
      : new CallMemo();
  const app = await buildApp({
    store,
    config,
    callMemo,
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
  });
  const log = pino({ level: 'silent' });
  const notifierPolls = pollCounter();
  const loops: Loop =
    options.loops === false
      ? { stop: async () => {} }
      : await startBackgroundLoops({
          store,
          config,
          log,
          onNotifierPoll: notifierPolls.onPoll,
          callMemo,
          verifyCallMemo: true,
        });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    store,
    app,
    config,
    notifierPolls,
    callMemo,
    async close() {
      await app.app.close();
      await loops.stop();
      if (!options.store) await store.close();
      if (callMemo && callMemo.stats.differed > 0)
        throw new Error(
          `${callMemo.stats.differed} evaluations found the calls held in memory different from the stored rows`,
        );
    },
  };
}

/** The server's in-flight ingest gauge (`rotscope_ingest_inflight_requests`), read in-process. */
export async function inflightRequests(server: Pick<TestServer, 'app'>): Promise<number> {
  return (await server.app.metrics.ingestInflight.get()).values[0]?.value ?? 0;
}

/** Waits until the server's in-flight gauge reads `count` (at most 10 s, then throws). */
export async function untilInflight(server: Pick<TestServer, 'app'>, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await inflightRequests(server)) !== count) {
    if (Date.now() > deadline)
      throw new Error(`in flight: ${await inflightRequests(server)}, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
