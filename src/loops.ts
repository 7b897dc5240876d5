/** Starts the background loops a `serve` process runs beside the HTTP server: evaluator and notifier. */
import type { Logger } from 'pino';
import { startNotifier } from './channels/delivery-loop.ts';
import type { Config } from './config.ts';
import { startEvaluator } from './evaluator/evaluator.ts';
import type { EvaluationResult } from './evaluator/evaluate.ts';
import type { Store } from './store/db.ts';

export interface Loop {
  stop(): Promise<void>;
}

export interface LoopOptions {
  store: Store;
  config: Config;
  log: Logger;
  /** Called after each evaluation commits (benchmarks, tests). */
  onEvaluated?: (result: EvaluationResult) => void;
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
      })
    : undefined;
  const notifier = config.notifier
    ? startNotifier({ store, config, log: log.child({ component: 'notifier' }) })
    : undefined;
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await evaluator?.stop();
        await notifier?.stop();
      })();
      return stopping;
    },
  };
}
