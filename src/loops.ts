/** Starts the background loops a `serve` process runs beside the HTTP server: evaluator, notifier, retention. */
import type { Logger } from 'pino';
import { startNotifier } from './notifier/notifier.ts';
import type { Config } from './config.ts';
import { startEvaluator } from './evaluator/loop.ts';
import type { EvaluationResult } from './evaluator/evaluate.ts';
import { describeError, isDatabaseUnavailable } from './store/connection-errors.ts';
import type { Store } from './store/db.ts';
import { maintainRawTables } from './store/retention.ts';
import type { CallMemo } from './store/call-memo.ts';

export interface Loop {
  stop(): Promise<void>;
}

export interface LoopOptions {
  store: Store;
  config: Config;
  log: Logger;
  /** Called after each evaluation commits (benchmarks, tests). */
  onEvaluated?: (result: EvaluationResult) => void;
  /** Called after each batch of evaluations commits (metrics). */
  onEvaluatorBatch?: () => void;
  /** Called after each claim round of the notifier (tests await rounds instead of sleeping). */
  onNotifierPoll?: () => void;
  /** The memory of new calls ingest in this process hands the evaluator (src/store/call-memo.ts). */
  callMemo?: CallMemo | undefined;
  /**
   * Compare every evaluation from `callMemo` with the stored rows (EvaluatorOptions). Default:
   * on when ROTSCOPE_VERIFY_CALL_MEMO=1, which the test suite sets (vitest.config.ts).
   */
  verifyCallMemo?: boolean;
}

/** Starts the loops the config enables; `stop()` drains the evaluator, then flushes deliveries. */
export async function startBackgroundLoops(options: LoopOptions): Promise<Loop> {
  const { store, config, log } = options;
  const evaluator = config.evaluator
    ? startEvaluator({
        store,
        config,
        log: log.child({ component: 'evaluator' }),
        ...(options.onEvaluated ? { onEvaluated: options.onEvaluated } : {}),
        ...(options.onEvaluatorBatch ? { onBatch: options.onEvaluatorBatch } : {}),
        callMemo: options.callMemo,
        // the test suite compares every evaluation from memory with the stored rows
        verifyCallMemo: options.verifyCallMemo ?? process.env.ROTSCOPE_VERIFY_CALL_MEMO === '1',
      })
    : undefined;
  const notifier = config.notifier
    ? startNotifier({
        store,
        config,
        log: log.child({ component: 'notifier' }),
        ...(options.onNotifierPoll ? { onPoll: options.onNotifierPoll } : {}),
      })
    : undefined;
  const retention = startRetention(store, config.retentionDays, log);
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await retention?.stop();
        await evaluator?.stop();
        await notifier?.stop();
      })();
      return stopping;
    },
  };
}

const RETENTION_EVERY_MS = 60 * 60 * 1000;

/**
 * Keeps the raw tables' daily partitions ahead of time and prunes old data (when `days` > 0),
 * once shortly after start, then hourly.
 */
function startRetention(store: Store, days: number, log: Logger): Loop {
  let running: Promise<void> | undefined;
  const prune = () => {
    running ??= maintainRawTables(store.db, days)
      .then(({ created, deleted }) => {
        if (created.length > 0) log.info({ created }, 'raw table partitions created');
        if (Object.values(deleted).some((n) => n > 0))
          log.info({ deleted, days }, 'retention pruned old rows');
      })
      .catch((error: unknown) =>
        isDatabaseUnavailable(error)
          ? log.warn(
              { error: describeError(error) },
              'retention cannot reach the database; retrying at the next interval',
            )
          : log.warn({ err: error }, 'retention failed; retrying at the next interval'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(prune, 10_000);
  const timer = setInterval(prune, RETENTION_EVERY_MS);
  first.unref();
  timer.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
