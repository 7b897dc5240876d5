/**
 * Sealing secrets at rest (channel secrets: webhook signing secrets and header values, Slack
 * URLs, SMTP passwords): AES-256-GCM from node:crypto, a fresh 12-byte IV per value, the
 * value's context (its workspace) as additional data, and the id of the key stored with each
 * value so keys can be rotated.
 *
 * Where the key comes from (DESIGN §8, docs/security.md):
 * - `ROTSCOPE_SECRET_KEY` (32 bytes, base64 or hex), with `ROTSCOPE_SECRET_KEY_PREVIOUS`
 *   (comma-separated) for keys being rotated out;
 * - else the key file `secret.key` in the data directory (`ROTSCOPE_DATA_DIR`, also on
 *   PostgreSQL), made on first use with mode 0600: one base64 key per line, the first seals,
 *   the others only open. A key file readable by group or others is refused.
 * - an in-memory data directory (`memory://`, tests) without a key gets a random key for the
 *   life of the process.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { Sealed, Sealer } from '../model/sealing.ts';

/** A key: 32 bytes and its id (the first 16 hex digits of a SHA-256 of the key). */
export interface SecretKey {
  id: string;
  key: Buffer;
}

export type { Sealed } from '../model/sealing.ts';

/** A value sealed with a key this process does not have (rotated away, or another server's). */
export class UnknownSecretKeyError extends Error {
  readonly code = 'ROTSCOPE_UNKNOWN_SECRET_KEY';
  constructor(readonly keyId: string) {
    super(
      `secret sealed with key ${keyId}, which this server does not have (ROTSCOPE_SECRET_KEY, ROTSCOPE_SECRET_KEY_PREVIOUS or the data directory's secret.key)`,
    );
  }
}

/** A key setting or key file that cannot be used. */
export class SecretKeyError extends Error {
  readonly code = 'ROTSCOPE_SECRET_KEY_INVALID';
}

const VERSION = 1;
const KEY_FILE = 'secret.key';

export function keyId(key: Buffer): string {
  return createHash('sha256')
    .update('rotscope secret key\0')
    .update(key)
    .digest('hex')
    .slice(0, 16);
}

/** Reads a 32-byte key written in base64 (44 characters) or hex (64). */
export function parseKey(text: string, source: string): SecretKey {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (!key || key.length !== 32) {
    throw new SecretKeyError(
      `${source}: a secret key is 32 bytes in base64 or hex (e.g. openssl rand -base64 32)`,
    );
  }
  return { id: keyId(key), key };
}

/** A new random key, base64. */
export function generateKeyText(): string {
  return randomBytes(32).toString('base64');
}

/** Where keys come from; see the module comment. */
export interface KeySource {
  secretKey?: string | undefined;
  secretKeyPrevious?: string | undefined;
  dataDir: string;
}

/** The keys a process seals and opens with. */
export class Keyring implements Sealer {
  #keys: SecretKey[];
  readonly #reload: (() => SecretKey[]) | undefined;

  /**
   * @param keys the sealing key first, then keys that only open.
   * @param reload re-reads the keys (a key file another process rotated); called when a value
   *   names a key not in the ring, and before sealing.
   */
  constructor(keys: SecretKey[], reload?: () => SecretKey[]) {
    if (keys.length === 0) throw new SecretKeyError('a keyring needs a key');
    this.#keys = keys;
    this.#reload = reload;
  }

  /** The key that seals. */
  get current(): SecretKey {
    this.#refresh();
    return this.#keys[0]!;
  }

  /** Ids of every key in the ring, the sealing key first. */
  get ids(): string[] {
    return this.#keys.map((k) => k.id);
  }

  #refresh(): void {
    if (this.#reload) this.#keys = this.#reload();
  }

  #find(id: string): SecretKey | undefined {
    let found = this.#keys.find((k) => k.id === id);
    if (!found && this.#reload) {
      this.#refresh();
      found = this.#keys.find((k) => k.id === id);
    }
    return found;
  }

  /** Whether the ring holds the key `id`. */
  has(id: string): boolean {
    return this.#find(id) !== undefined;
  }

  /** Seals a JSON value; `context` (e.g. the workspace) must be given again to open it. */
  seal(value: unknown, context: string): Sealed {
    const { id, key } = this.current;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const plain = Buffer.from(JSON.stringify(value));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    plain.fill(0);
    return { keyId: id, data: Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]) };
  }

  /**
   * Opens a sealed value. Throws {@link UnknownSecretKeyError} when the key is not in the
   * ring, and an Error when the value was altered or sealed for another context.
   */
  open(sealed: Sealed, context: string): unknown {
    const found = this.#find(sealed.keyId);
    if (!found) throw new UnknownSecretKeyError(sealed.keyId);
    const { data } = sealed;
    if (data.length < 29 || data[0] !== VERSION) throw new Error('sealed secret: bad format');
    const decipher = createDecipheriv('aes-256-gcm', found.key, data.subarray(1, 13));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(13, 29));
    const plain = Buffer.concat([decipher.update(data.subarray(29)), decipher.final()]);
    return JSON.parse(plain.toString('utf8'));
  }
}

/** The key file of a data directory. */
export function keyFilePath(dataDir: string): string {
  return path.join(dataDir, KEY_FILE);
}

/** Reads a key file (refusing one that group or others may read); the sealing key first. */
export function readKeyFile(file: string): SecretKey[] {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SecretKeyError(
      `${file} may be read by other users (mode ${mode.toString(8)}): chmod 600 ${file}`,
    );
  }
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (lines.length === 0) throw new SecretKeyError(`${file} holds no key`);
  return lines.map((line, i) => parseKey(line, `${file} line ${i + 1}`));
}

const HEADER =
  '# rotscope secret keys: the first line seals channel secrets, the others only open them.\n' +
  '# Keep a copy of this file with your backups: without it the sealed secrets are lost.\n';

/** Writes a key file atomically with mode 0600 (`keys` as base64, the sealing key first). */
export function writeKeyFile(file: string, keys: readonly SecretKey[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, HEADER + keys.map((k) => k.key.toString('base64')).join('\n') + '\n', {
    mode: 0o600,
  });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}

/** Creates the key file with a new key unless it exists (safe when two processes race). */
function ensureKeyFile(file: string): void {
  try {
    statSync(file);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, HEADER + generateKeyText() + '\n', { mode: 0o600 });
  chmodSync(temp, 0o600);
  try {
    linkSync(temp, file); // fails if another process made it first: theirs wins
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
}

/** A key file's keys, re-read only when the file changed (mtime and size). */
function keyFileReader(file: string): () => SecretKey[] {
  let seen = '';
  let keys: SecretKey[] = [];
  return () => {
    const stat = statSync(file);
    const stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    if (stamp !== seen) {
      keys = readKeyFile(file);
      seen = stamp;
    }
    return keys;
  };
}

const ephemeral = new Map<string, Keyring>();

/**
 * The keyring of a configuration (see the module comment). Throws {@link SecretKeyError} for a
 * key setting or key file that cannot be used.
 */
export function openKeyring(source: KeySource): Keyring {
  if (source.secretKey !== undefined) {
    const keys = [parseKey(source.secretKey, 'ROTSCOPE_SECRET_KEY')];
    for (const [i, text] of (source.secretKeyPrevious ?? '').split(',').entries()) {
      if (text.trim() !== '')
        keys.push(parseKey(text, `ROTSCOPE_SECRET_KEY_PREVIOUS item ${i + 1}`));
    }
    return new Keyring(keys);
  }
  if (source.dataDir.startsWith('memory://')) {
    let ring = ephemeral.get(source.dataDir);
    if (!ring) {
      ring = new Keyring([parseKey(generateKeyText(), 'generated')]);
      ephemeral.set(source.dataDir, ring);
    }
    return ring;
  }
  const file = keyFilePath(path.resolve(source.dataDir));
  ensureKeyFile(file);
  const read = keyFileReader(file);
  return new Keyring(read(), read);
}

const rings = new Map<string, Keyring>();

/** {@link openKeyring}, one keyring per distinct source in a process. */
export function keyringFor(source: KeySource): Keyring {
  const cacheKey = JSON.stringify([
    source.secretKey ?? null,
    source.secretKeyPrevious ?? null,
    source.secretKey === undefined ? path.resolve(source.dataDir) : null,
  ]);
  let ring = rings.get(cacheKey);
  if (!ring) {
    ring = openKeyring(source);
    rings.set(cacheKey, ring);
  }
  return ring;
}
