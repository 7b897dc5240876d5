/**
 * The notifier: the one delivery loop. It claims due outbox rows (`FOR UPDATE SKIP LOCKED`,
 * one short statement), sends each with a timeout, logs every attempt, and decides what
 * comes next: delivered; retry later (network errors, timeouts, 408, 429, 5xx) after a
 * jittered exponential backoff that honours `Retry-After`; failed at once on a permanent
 * error (other 4xx, refused destination, bad configuration); dead once retrying would go
 * past `deliveryGiveUpMs` from when the delivery was queued.
 *
 * Sends run concurrently (up to `concurrency`, at most `perChannel` per channel), so a slow
 * or dead endpoint holds its own slots and never delays another channel. Several notifiers
 * (processes) can share one database: claims never overlap, and a claim is a lease, so a
 * delivery whose notifier died is sent again after the lease (at-least-once, same id).
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import { createEventLog } from '../log/event-log.ts';
import { getChannelWithSecrets } from '../store/channels.ts';
import { keyringFor, UnknownSecretKeyError, type Keyring } from '../secrets/keyring.ts';
import { describeError, isDatabaseUnavailable } from '../store/connection-errors.ts';
import type { Db } from '../store/db.ts';
import { DATABASE_CLOCK, type Clock } from '../model/clock.ts';
import {
  claimDueDeliveries,
  finishAttempt,
  type AttemptOutcome,
  type ClaimedDelivery,
} from '../store/deliveries.ts';
import {
  allowsPrivateAddress,
  fromStored,
  type ChannelSettings,
  type ChannelType,
} from './config.ts';
import { sendEmail } from './email.ts';
import { errorMessage } from './outbound.ts';
import {
  buildPayload,
  buildWindowUnknownPayload,
  loadFinding,
  loadWindowNotice,
  testPayload,
  type ChannelPayload,
} from './payload.ts';
import { backoffMs, DEFAULT_BACKOFF, type BackoffOptions, type SendResult } from './policy.ts';
import { sendSlack } from './slack.ts';
import { sendWebhook, type SendContext } from './webhook.ts';
import { plural } from '../model/plural.ts';

/** The logging the notifier needs (pino and fastify loggers fit). */
export interface NotifierLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export type NotifierConfig = Pick<
  Config,
  'deliveryTimeoutMs' | 'deliveryGiveUpMs' | 'allowPrivateAddresses' | 'publicUrl' | 'host' | 'port'
> &
  Partial<Pick<Config, 'logEventIntervalMs' | 'dataDir' | 'secretKey' | 'secretKeyPrevious'>>;

/** The keys that open channel secrets (src/secrets/keyring.ts): the config's key or key file. */
export function channelKeys(config: NotifierConfig): Keyring {
  return keyringFor({
    secretKey: config.secretKey,
    secretKeyPrevious: config.secretKeyPrevious,
    dataDir: config.dataDir ?? 'memory://',
  });
}

/**
 * The timers a send is judged by: its deadline (the delivery timeout) and how long it took.
 * Real ones in a server; a test gives its own and moves them on instead of waiting out a
 * timeout (test/helpers/clock.ts ManualTimers). Due times, leases and give-up are the
 * {@link Clock}'s; polling and `stop()`'s wait stay on real time.
 */
export interface NotifierTimers {
  /** Runs `fn` once `ms` have passed; returns what cancels it. */
  after(ms: number, fn: () => void): () => void;
  /** Monotonic milliseconds. */
  now(): number;
}

export const REAL_TIMERS: NotifierTimers = Object.freeze({
  after(ms: number, fn: () => void) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
  now: () => performance.now(),
});

export interface NotifierOptions {
  store: { db: Db };
  config: NotifierConfig;
  log: NotifierLogger;
  /** How often to look for due deliveries (ms). Default 500. */
  pollMs?: number;
  /** Most sends in flight at once. Default 16. */
  concurrency?: number;
  /** Most sends in flight to one channel. Default 2. */
  perChannel?: number;
  /** Backoff between attempts. Default 1 s doubling up to 1 h, jittered. */
  backoff?: Partial<BackoffOptions>;
  /** How long a claim holds before another notifier may take the row (ms). Default 2 × timeout + 5 s. */
  leaseMs?: number;
  /** How long `stop()` waits for sends in flight before aborting them (ms). Default timeout + 1 s. */
  stopTimeoutMs?: number;
  /** Source of jitter in [0, 1). Default Math.random. */
  random?: () => number;
  /** The clock due times, leases and give-up are judged by (src/model/clock.ts). Default: the database's. */
  clock?: Clock;
  /** The timers of each send: its deadline and its duration. Default: real ones. */
  timers?: NotifierTimers;
  /**
   * Called after each look for due deliveries (a claim round, whether it took any): a test
   * awaits the next rounds to know that nothing more was sent, instead of sleeping.
   */
  onPoll?: () => void;
  /** Called after each recorded attempt (for metrics: count outcomes, observe durations). */
  onAttempt?: (attempt: {
    outcome: AttemptOutcome;
    channelType: ChannelType | undefined;
    durationMs: number;
  }) => void;
}

export interface Notifier {
  /**
   * Stops claiming, waits for sends in flight (up to `stopTimeoutMs`, then aborts them and
   * records them as retryable), and resolves. Safe to call more than once.
   */
  stop(): Promise<void>;
}

/**
 * Dispatches to the channel's sender. A channel an admin allowed to reach private addresses
 * (`config.allowPrivateAddress`) may, whatever the server-wide setting.
 */
export function sendToChannel(
  settings: ChannelSettings,
  payload: ChannelPayload,
  messageId: string,
  serverContext: SendContext,
): Promise<SendResult> {
  const context = allowsPrivateAddress(settings)
    ? { ...serverContext, allowPrivate: true }
    : serverContext;
  switch (settings.type) {
    case 'webhook':
      return sendWebhook(settings, payload, messageId, context);
    case 'slack':
      return sendSlack(settings, payload, context);
    case 'email':
      return sendEmail(settings, payload, context);
  }
}

/**
 * Sends with a deadline: after `timeoutMs` the send is aborted and counts as a retryable
 * timeout, even if the sender does not react to the abort. `controller` lets the caller
 * abort earlier (shutdown). Unexpected throws (bugs) become retryable errors.
 */
export async function sendWithTimeout(
  settings: ChannelSettings,
  payload: ChannelPayload,
  messageId: string,
  options: {
    timeoutMs: number;
    allowPrivate: boolean;
    controller?: AbortController;
    timers?: NotifierTimers;
  },
): Promise<SendResult> {
  const controller = options.controller ?? new AbortController();
  const cancel = (options.timers ?? REAL_TIMERS).after(options.timeoutMs, () =>
    controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)),
  );
  const aborted = new Promise<SendResult>((resolve) => {
    const onAbort = () =>
      resolve({ status: 'retry', error: errorMessage(controller.signal.reason ?? 'aborted') });
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const send = sendToChannel(settings, payload, messageId, {
      signal: controller.signal,
      allowPrivate: options.allowPrivate,
      now: () => new Date(),
    }).catch((error: unknown): SendResult => ({
      status: 'retry',
      error: `internal error: ${errorMessage(error)}`,
    }));
    return await Promise.race([send, aborted]);
  } finally {
    cancel();
  }
}

export type TestSendResult =
  { found: true; messageId: string; durationMs: number; result: SendResult } | { found: false };

/**
 * Sends a test message (a made-up finding) to a channel of the workspace right away, with
 * the delivery timeout, and reports what happened. Nothing is queued or retried.
 */
export async function sendTest(
  db: Db,
  workspaceId: string,
  channelId: string,
  config: NotifierConfig,
): Promise<TestSendResult> {
  let channel;
  try {
    channel = await getChannelWithSecrets(db, channelKeys(config), workspaceId, channelId);
  } catch (error) {
    if (!(error instanceof UnknownSecretKeyError)) throw error;
    const result: SendResult = { status: 'retry', error: error.message };
    return { found: true, messageId: 'msg_test_unsent', durationMs: 0, result };
  }
  if (!channel) return { found: false };
  const messageId = `msg_test_${randomUUID().replaceAll('-', '')}`;
  const started = performance.now();
  const settings = fromStored(channel.type, channel);
  const result: SendResult = settings.ok
    ? await sendWithTimeout(
        settings.value,
        testPayload(workspaceId, config, new Date()),
        messageId,
        {
          timeoutMs: config.deliveryTimeoutMs,
          allowPrivate: config.allowPrivateAddresses,
        },
      )
    : { status: 'permanent', error: settings.error };
  return { found: true, messageId, durationMs: Math.round(performance.now() - started), result };
}

/** What to record after a send: the attempt's outcome and, for retries, the wait. */
export function decide(
  result: SendResult,
  claim: Pick<ClaimedDelivery, 'attempt' | 'ageMs'>,
  elapsedMs: number,
  options: { giveUpMs: number; backoff: BackoffOptions; random: number },
): { outcome: AttemptOutcome; retryInMs?: number } {
  if (result.status === 'ok') return { outcome: 'delivered' };
  if (result.status === 'permanent') return { outcome: 'failed' };
  const wait = backoffMs(claim.attempt, options.backoff, options.random, result.afterMs);
  if (claim.ageMs + elapsedMs + wait > options.giveUpMs) return { outcome: 'dead' };
  return { outcome: 'retry', retryInMs: wait };
}

/** Starts the delivery loop. See {@link Notifier.stop} to end it. */
export function startNotifier(options: NotifierOptions): Notifier {
  const { config, log } = options;
  const db = options.store.db;
  const pollMs = options.pollMs ?? 500;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const perChannel = Math.max(1, options.perChannel ?? 2);
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.backoff };
  const leaseMs = options.leaseMs ?? config.deliveryTimeoutMs * 2 + 5_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? config.deliveryTimeoutMs + 1_000;
  const random = options.random ?? Math.random;
  const clock = options.clock ?? DATABASE_CLOCK;
  const timers = options.timers ?? REAL_TIMERS;
  const events = createEventLog(log, { intervalMs: config.logEventIntervalMs ?? 10_000 });

  const inflight = new Map<
    string,
    { channelId: string; controller: AbortController; done: Promise<void> }
  >();
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;
  let claimFailing = false;
  /** The database could not be reached (logged once; cleared by the next claim that works). */
  let databaseDown = false;

  /**
   * Handles an error of the database: when it cannot be reached, logs one line for the whole
   * outage and returns true (the caller leaves the delivery to its lease); else returns false.
   */
  function databaseUnavailable(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (!databaseDown)
      log.warn(
        { error: describeError(error) },
        'delivery: cannot reach the database; retrying every 2 s',
      );
    databaseDown = true;
    return true;
  }

  async function prepare(
    claim: ClaimedDelivery,
  ): Promise<
    | { ok: true; settings: ChannelSettings; payload: ChannelPayload }
    | { ok: false; error: string; retry?: true }
  > {
    let channel;
    try {
      channel = await getChannelWithSecrets(
        db,
        channelKeys(config),
        claim.workspaceId,
        claim.channelId,
      );
    } catch (error) {
      // Sealed with a key this process lacks: another process (with the key) may send it.
      if (error instanceof UnknownSecretKeyError)
        return { ok: false, error: error.message, retry: true };
      throw error;
    }
    if (!channel) return { ok: false, error: 'channel not found' };
    const settings = fromStored(channel.type, channel);
    if (!settings.ok) return settings;
    if (claim.noticeId !== null) {
      const noticed = await loadWindowNotice(db, claim.workspaceId, claim.noticeId);
      if (!noticed) return { ok: false, error: 'window notice not found' };
      return {
        ok: true,
        settings: settings.value,
        payload: buildWindowUnknownPayload(noticed.notice, noticed.workspaceName, config),
      };
    }
    if (claim.findingId === null) return { ok: false, error: 'finding not found' };
    const loaded = await loadFinding(db, claim.workspaceId, claim.findingId);
    if (!loaded) return { ok: false, error: 'finding not found' };
    const type = claim.event === 'escalated' ? 'finding.escalated' : 'finding.created';
    return {
      ok: true,
      settings: settings.value,
      payload: buildPayload(loaded.finding, type, loaded.workspaceName, config),
    };
  }

  async function deliver(claim: ClaimedDelivery, controller: AbortController): Promise<void> {
    const started = timers.now();
    let result: SendResult;
    let channelType: ChannelType | undefined;
    try {
      const prepared = await prepare(claim);
      if (prepared.ok) channelType = prepared.settings.type;
      result = prepared.ok
        ? await sendWithTimeout(prepared.settings, prepared.payload, claim.id, {
            timeoutMs: config.deliveryTimeoutMs,
            allowPrivate: config.allowPrivateAddresses,
            controller,
            timers,
          })
        : { status: prepared.retry ? 'retry' : 'permanent', error: prepared.error };
    } catch (error) {
      // The database failed while loading: leave the row to its lease and try again later.
      if (databaseUnavailable(error)) return;
      log.error(
        { err: error, deliveryId: claim.id },
        'delivery: could not load channel or finding',
      );
      return;
    }
    const durationMs = timers.now() - started;
    const decision = decide(result, claim, durationMs, {
      giveUpMs: config.deliveryGiveUpMs,
      backoff,
      random: random(),
    });
    const error =
      result.status === 'ok'
        ? undefined
        : decision.outcome === 'dead'
          ? `gave up after ${plural(claim.attempt, 'attempt')}: ${result.error}`
          : result.error;
    try {
      await db.transaction().execute((trx) =>
        finishAttempt(
          trx,
          {
            deliveryId: claim.id,
            attempt: claim.attempt,
            outcome: decision.outcome,
            statusCode: result.code,
            error,
            durationMs,
            retryInMs: decision.retryInMs,
          },
          clock,
        ),
      );
    } catch (err) {
      // The channel (and with it the delivery) was deleted meanwhile: nothing left to record.
      if ((err as { code?: unknown }).code === '23503') return;
      // Sent but not recorded: the lease runs out and it is sent again (at-least-once, same id).
      if (databaseUnavailable(err)) return;
      log.error({ err, deliveryId: claim.id }, 'delivery: could not record attempt');
      return;
    }
    options.onAttempt?.({ outcome: decision.outcome, channelType, durationMs });
    const fields = {
      deliveryId: claim.id,
      channelId: claim.channelId,
      ...(claim.findingId !== null ? { findingId: claim.findingId } : {}),
      ...(claim.noticeId !== null ? { noticeId: claim.noticeId } : {}),
      attempt: claim.attempt,
      ...(result.code !== undefined ? { code: result.code } : {}),
      ...(error !== undefined ? { error } : {}),
      ...(decision.retryInMs !== undefined ? { retryInMs: decision.retryInMs } : {}),
    };
    // One line per outcome and workspace per interval; no URL or secret, only ids and the error.
    events.event(
      decision.outcome === 'delivered' || decision.outcome === 'retry' ? 'info' : 'warn',
      `delivery_${decision.outcome}`,
      claim.workspaceId,
      { ...fields, ...(channelType ? { channelType } : {}) },
      decision.outcome === 'retry' ? 'delivery: will retry' : `delivery: ${decision.outcome}`,
    );
  }

  function launch(claim: ClaimedDelivery): void {
    const controller = new AbortController();
    const done = deliver(claim, controller)
      .catch((error: unknown) =>
        log.error({ err: error, deliveryId: claim.id }, 'delivery: unexpected error'),
      )
      .finally(() => {
        inflight.delete(claim.id);
        kick();
      });
    inflight.set(claim.id, { channelId: claim.channelId, controller, done });
  }

  function busyChannels(): string[] {
    const counts = new Map<string, number>();
    for (const entry of inflight.values())
      counts.set(entry.channelId, (counts.get(entry.channelId) ?? 0) + 1);
    return [...counts].filter(([, count]) => count >= perChannel).map(([id]) => id);
  }

  async function claimRound(): Promise<void> {
    do {
      again = false;
      while (!stopped) {
        const room = concurrency - inflight.size;
        if (room <= 0) break;
        const claimed = await claimDueDeliveries(db, {
          limit: room,
          leaseMs,
          excludeChannelIds: busyChannels(),
          perChannel,
          clock,
        });
        for (const claim of claimed) launch(claim);
        if (claimed.length < room) break;
      }
    } while (again && !stopped);
  }

  function kick(): void {
    if (stopped) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = claimRound()
      .then(() => {
        if (claimFailing || databaseDown) log.info({}, 'delivery: claiming works again');
        claimFailing = false;
        databaseDown = false;
      })
      .catch((error: unknown) => {
        if (!databaseUnavailable(error) && !claimFailing)
          log.error({ err: error }, 'delivery: could not claim due deliveries');
        claimFailing = true;
      })
      .finally(() => {
        ticking = undefined;
        options.onPoll?.();
        schedule();
      });
  }

  function schedule(): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(kick, claimFailing ? Math.max(pollMs, 2_000) : pollMs);
    timer.unref?.();
  }

  async function stopNow(): Promise<void> {
    stopped = true;
    clearTimeout(timer);
    await ticking;
    const pending = () => Promise.allSettled([...inflight.values()].map((entry) => entry.done));
    let deadline: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      deadline = setTimeout(() => resolve('timeout'), stopTimeoutMs);
    });
    const first = await Promise.race([pending(), timedOut]);
    clearTimeout(deadline);
    if (first === 'timeout' && inflight.size > 0) {
      for (const entry of inflight.values())
        entry.controller.abort(new Error('aborted: notifier stopping'));
      await pending();
    }
  }

  kick();
  return {
    stop() {
      stopping ??= stopNow();
      return stopping;
    },
  };
}
