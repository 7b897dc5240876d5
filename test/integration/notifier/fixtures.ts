/** Shared set-up for the channel tests: findings, channels, queued deliveries, a logger. */
import { defaultConfig, type Config } from '../../../src/config.ts';
import { toStored, type ChannelSettings } from '../../../src/notifier/config.ts';
import type { NotifierLogger } from '../../../src/notifier/notifier.ts';
import type { Severity } from '../../../src/model/findings.ts';
import { setAlertChannels } from '../../../src/store/alert-channels.ts';
import { createChannel } from '../../../src/store/channels.ts';
import { channelKeys } from '../../../src/notifier/notifier.ts';
import type { Db } from '../../../src/store/db.ts';
import { enqueueDeliveries } from '../../../src/store/deliveries.ts';

let anchor = 0;

/** Inserts a finding and returns its id. */
export async function insertFinding(
  db: Db,
  options: {
    workspaceId?: string;
    severity?: Severity;
    detector?: string;
    details?: Record<string, unknown>;
  } = {},
): Promise<string> {
  anchor += 1;
  const row = await db
    .insertInto('findings')
    .values({
      workspace_id: options.workspaceId ?? 'default',
      detector: options.detector ?? 'context_too_full',
      anchor: `anchor-${anchor}-${Math.random()}`,
      severity: options.severity ?? 'warning',
      kind: null,
      conversation_id: 'conv-1',
      stream_key: 'conv-1',
      run_id: 'run-1',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      span_id: 'b7ad6b7169203331',
      model: 'claude-sonnet-4-5',
      summary: 'Context 152,000 of 200,000 tokens (76%) in claude-sonnet-4-5',
      details: JSON.stringify(
        options.details ?? {
          usage: 152_000,
          window: 200_000,
          percentage: 76,
          windowSource: 'catalog',
        },
      ),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/** Stores a channel from full settings and returns its id. */
export async function addChannel(
  db: Db,
  settings: ChannelSettings,
  workspaceId = 'default',
  name = `${settings.type} channel`,
): Promise<string> {
  const stored = toStored(settings);
  const channel = await createChannel(db, channelKeys(testConfig()), workspaceId, {
    type: settings.type,
    name,
    ...stored,
  });
  return channel.id;
}

/**
 * Attaches the channels to the alert (minimum severity info), inserts a finding and queues
 * its deliveries, as the evaluator does in one transaction. Returns the finding id.
 */
export async function queueFinding(
  db: Db,
  channelIds: string[],
  options: { workspaceId?: string; severity?: Severity } = {},
): Promise<string> {
  const workspaceId = options.workspaceId ?? 'default';
  const attached = await setAlertChannels(
    db,
    workspaceId,
    channelIds.map((id) => ({ id, minSeverity: 'info' })),
  );
  if (!attached.ok) throw new Error(attached.error);
  return db.transaction().execute(async (trx) => {
    const findingId = await insertFinding(trx, {
      workspaceId,
      severity: options.severity ?? 'warning',
    });
    await enqueueDeliveries(trx, {
      workspaceId,
      findingId,
      severity: options.severity ?? 'warning',
      event: 'created',
    });
    return findingId;
  });
}

/** Deliveries of a finding, with their attempts, oldest attempt first. */
export async function deliveriesOf(db: Db, findingId: string) {
  const rows = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('finding_id', '=', findingId)
    .execute();
  const attempts = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', rows.length > 0 ? rows.map((row) => row.id) : ['-'])
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    ...row,
    attemptLog: attempts.filter((a) => a.delivery_id === row.id),
  }));
}

/** Polls until `check` returns a value other than undefined/false. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A logger that keeps what it is told. */
export function memoryLogger(): NotifierLogger & {
  lines: Array<{ level: string; msg: string; obj: object }>;
} {
  const lines: Array<{ level: string; msg: string; obj: object }> = [];
  const at = (level: string) => (obj: object, msg: string) => lines.push({ level, msg, obj });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Config for tests: loopback allowed, short timeouts. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return defaultConfig({
    allowPrivateAddresses: true,
    deliveryTimeoutMs: 10_000,
    deliveryGiveUpMs: 60_000,
    publicUrl: 'https://rotscope.example.com',
    ...overrides,
  });
}

/** Fast notifier options for tests. */
export const FAST = { pollMs: 25, backoff: { initialMs: 50, maxMs: 400 } } as const;

export { pollCounter } from '../../helpers/poll-counter.ts';
