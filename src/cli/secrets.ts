/**
 * `rotscope secrets status|seal|rotate` (docs/security.md); the sealing `rotscope serve` does
 * on start is src/notifier/seal-secrets.ts. Channel secrets are sealed with AES-256-GCM (src/secrets/keyring.ts) under the
 * key of ROTSCOPE_SECRET_KEY, or else of the data directory's `secret.key`.
 *
 * - `status`: the keys this process has, and how many channels each key sealed (plaintext too).
 * - `seal`: seals the channels still in plaintext (rows written before sealing existed).
 * - `rotate`: with a key file, adds a new sealing key to it, re-seals every channel with it, and
 *   drops the old keys from the file once nothing uses them. With ROTSCOPE_SECRET_KEY, re-seals
 *   every channel under it, opening with ROTSCOPE_SECRET_KEY_PREVIOUS (set the new key there
 *   and the old one in _PREVIOUS, run this, then restart the servers with the new key).
 */
import type { Config } from '../config.ts';
import { channelKeys } from '../notifier/notifier.ts';
import { resealChannelSecrets, secretsCensus, type SecretsCensus } from '../store/channels.ts';
import type { Store } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import {
  generateKeyText,
  keyFilePath,
  parseKey,
  readKeyFile,
  writeKeyFile,
  type Keyring,
} from '../secrets/keyring.ts';
import { purgeOldVersions } from '../notifier/seal-secrets.ts';
import {
  callServer,
  openStoreOrHolder,
  refuseHeld,
  type ServerElsewhereError,
} from './held-data-dir.ts';
import { plural } from '../model/plural.ts';

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const SECRETS_USAGE = `Usage:
  rotscope secrets status   the keys this process has, and the channels each one sealed
  rotscope secrets seal     seal channel secrets still stored in plaintext (serve does it on start)
  rotscope secrets rotate   re-seal every channel secret under a new key (see docs/security.md)
`;

function describeCensus(census: SecretsCensus, keys: Pick<Keyring, 'ids' | 'has'>): string {
  const lines = [
    `keys here: ${keys.ids.map((id, i) => (i === 0 ? `${id} (seals)` : id)).join(', ')}`,
  ];
  lines.push(`channels in plaintext: ${census.plaintext}`);
  for (const [id, n] of Object.entries(census.byKey)) {
    lines.push(`channels sealed with ${id}: ${n}${keys.has(id) ? '' : ' (key missing here)'}`);
  }
  return lines.join('\n') + '\n';
}

export async function secretsCommand(
  subcommand: string,
  config: Config,
  io: Out,
  adminToken?: string,
  elsewhere?: ServerElsewhereError,
): Promise<number> {
  const { store, locked } = await openStoreOrHolder(config, elsewhere);
  if (locked) {
    // Reading needs no lock: the server holding the embedded database answers it.
    if (subcommand !== 'status') return refuseHeld(`secrets ${subcommand}`, locked, io);
    const answer = (await callServer(
      locked,
      'secrets status',
      { method: 'GET', path: '/api/secrets', adminToken },
      io,
    )) as (SecretsCensus & { keysHere: string[] }) | undefined;
    if (!answer) return 1;
    io.stdout(
      `(from the running server, pid ${locked.holder?.pid})\n` +
        describeCensus(answer, { ids: answer.keysHere, has: (id) => answer.keysHere.includes(id) }),
    );
    return 0;
  }
  try {
    await migrate(store.db);
    switch (subcommand) {
      case 'status': {
        io.stdout(describeCensus(await secretsCensus(store.db), channelKeys(config)));
        return 0;
      }
      case 'seal': {
        const keys = channelKeys(config);
        const result = await resealChannelSecrets(store.db, keys);
        if (result.sealed > 0) await purgeOldVersions(store);
        io.stdout(
          `sealed ${plural(result.sealed, 'channel')} in plaintext and re-sealed ${result.resealed} with key ${keys.current.id}\n`,
        );
        return reportUnknown(result.unknownKeys, io);
      }
      case 'rotate':
        return await rotate(store, config, io);
      default:
        io.stderr(SECRETS_USAGE);
        return 2;
    }
  } finally {
    await store.close();
  }
}

function reportUnknown(unknownKeys: Record<string, number>, io: Out): number {
  const entries = Object.entries(unknownKeys);
  if (entries.length === 0) return 0;
  io.stderr(
    `cannot open ${entries.map(([id, n]) => `${plural(n, 'channel')} sealed with key ${id}`).join(', ')}: ` +
      'give that key in ROTSCOPE_SECRET_KEY_PREVIOUS (or keep it in secret.key) and run again\n',
  );
  return 1;
}

async function rotate(store: Store, config: Config, io: Out): Promise<number> {
  if (config.secretKey !== undefined) {
    // The operator brings the keys: the new one in ROTSCOPE_SECRET_KEY, the old in _PREVIOUS.
    const keys = channelKeys(config);
    const result = await resealChannelSecrets(store.db, keys);
    const census = await secretsCensus(store.db);
    io.stdout(
      `re-sealed ${plural(result.resealed, 'channel')} and sealed ${result.sealed} in plaintext with key ${keys.current.id}\n` +
        describeCensus(census, keys) +
        (Object.keys(census.byKey).every((id) => id === keys.current.id) && census.plaintext === 0
          ? 'nothing uses the previous keys now: restart every server with the new ROTSCOPE_SECRET_KEY and drop ROTSCOPE_SECRET_KEY_PREVIOUS\n'
          : ''),
    );
    return reportUnknown(result.unknownKeys, io);
  }
  if (config.dataDir.startsWith('memory://')) {
    io.stderr('rotscope secrets rotate: no key file in an in-memory data directory\n');
    return 2;
  }
  const file = keyFilePath(config.dataDir);
  channelKeys(config); // makes the key file when there is none yet
  const old = readKeyFile(file);
  const fresh = parseKey(generateKeyText(), 'generated key');
  // 1. The new key seals from now on; the old ones still open (servers re-read the file).
  writeKeyFile(file, [fresh, ...old]);
  const keys = channelKeys(config);
  const result = await resealChannelSecrets(store.db, keys);
  // 2. Keys nothing is sealed with any more leave the file.
  const census = await secretsCensus(store.db);
  const kept = old.filter((key) => (census.byKey[key.id] ?? 0) > 0);
  writeKeyFile(file, [fresh, ...kept]);
  const dropped = old.filter((key) => !kept.includes(key));
  io.stdout(
    `new key ${fresh.id} in ${file}; re-sealed ${plural(result.resealed, 'channel')}, sealed ${result.sealed} in plaintext\n` +
      (dropped.length > 0 ? `retired keys: ${dropped.map((k) => k.id).join(', ')}\n` : '') +
      (kept.length > 0 ? `kept keys still in use: ${kept.map((k) => k.id).join(', ')}\n` : '') +
      (dropped.length > 0
        ? 'the retired keys are gone from the file: a database backup from before this rotation opens only with a copy of the key file from before it\n'
        : ''),
  );
  return reportUnknown(result.unknownKeys, io);
}
