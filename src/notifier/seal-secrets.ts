/**
 * The start-up step of `rotscope serve` that seals channel secrets an older version stored in
 * plaintext (docs/security.md); `rotscope secrets` (src/cli/secrets.ts) does the same on demand.
 */
import { sql } from 'kysely';
import type { Config } from '../config.ts';
import { resealChannelSecrets } from '../store/channels.ts';
import type { Store } from '../store/db.ts';
import { channelKeys } from './notifier.ts';

interface StartLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * Drops the old row versions of `channels` and forces a checkpoint, so plaintext that was just
 * sealed does not linger in table pages (VACUUM FULL rewrites the table). Old WAL segments
 * may still hold it until they are recycled (docs/security.md). Best effort: a role without
 * the right to CHECKPOINT skips it.
 */
export async function purgeOldVersions(store: Store): Promise<void> {
  await sql`VACUUM FULL channels`.execute(store.db);
  try {
    await sql`CHECKPOINT`.execute(store.db);
  } catch {
    // not a superuser (PostgreSQL 15+ grants pg_checkpoint separately): the server's own
    // checkpoints recycle the WAL in time
  }
}

/**
 * Seals, with the current key, the channel secrets still in plaintext (and re-seals those of
 * keys being rotated out); warns about values sealed with keys this process lacks. Throws
 * SecretKeyError when the key setting or key file cannot be used: serve does not start.
 */
export async function sealChannelSecretsOnStart(
  store: Store,
  config: Config,
  log: StartLog,
): Promise<void> {
  const keys = channelKeys(config);
  const result = await resealChannelSecrets(store.db, keys);
  if (result.sealed > 0) {
    await purgeOldVersions(store);
    log.info(
      { sealed: result.sealed, keyId: keys.current.id },
      'channel secrets stored in plaintext by an older version are now sealed',
    );
  }
  if (result.resealed > 0)
    log.info({ resealed: result.resealed, keyId: keys.current.id }, 'channel secrets re-sealed');
  const unknown = Object.keys(result.unknownKeys);
  if (unknown.length > 0) {
    log.warn(
      { keyIds: unknown, channels: result.unknownKeys, keyIdsHere: keys.ids },
      'some channel secrets are sealed with keys this server does not have: it cannot send to those channels (give every server the same ROTSCOPE_SECRET_KEY)',
    );
  }
}
