/**
 * Where the embedded database lives when nothing says: one per-user place,
 * `$XDG_DATA_HOME/rotscope` (default `~/.local/share/rotscope`), so `rotscope import` run from
 * any folder finds the store `rotscope serve` uses. Earlier versions kept it in `./.rotscope`
 * of the current folder (every folder another store): such a directory, when it holds a
 * database, is still used, and named, so its data is not silently left behind.
 * `--data-dir`, `ROTSCOPE_DATA_DIR` and `DATABASE_URL` choose the store themselves.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

type Env = Record<string, string | undefined>;

/** The data directory of earlier versions, relative to the current folder. */
export const LEGACY_DATA_DIR = '.rotscope';

/** How the data directory was chosen: by the user, an earlier version's, or the per-user default. */
export type DataDirSource = 'chosen' | 'legacy' | 'default';

export interface DataDirChoice {
  /** Absolute path (or the path as the user gave it, when chosen). */
  dataDir: string;
  source: DataDirSource;
}

/** `$XDG_DATA_HOME/rotscope`, else `$HOME/.local/share/rotscope`. */
export function userDataDir(env: Env): string {
  const xdg = env.XDG_DATA_HOME;
  const base =
    xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || homedir(), '.local', 'share');
  return path.join(base, 'rotscope');
}

/** True when `dir` holds an embedded database (PGlite writes PG_VERSION at its root). */
export function holdsDatabase(dir: string): boolean {
  try {
    return existsSync(path.join(dir, 'PG_VERSION')) || readdirSync(dir).includes('base');
  } catch {
    return false;
  }
}

/**
 * The data directory a command uses: the one given (`--data-dir`, then ROTSCOPE_DATA_DIR),
 * else `./.rotscope` when an earlier version left a database there, else the per-user default.
 */
export function chooseDataDir(
  given: { flag?: string | undefined; env?: string | undefined },
  env: Env,
  cwd: string,
): DataDirChoice {
  const chosen = given.flag || given.env;
  if (chosen) return { dataDir: chosen, source: 'chosen' };
  const legacy = path.join(cwd, LEGACY_DATA_DIR);
  if (holdsDatabase(legacy)) return { dataDir: legacy, source: 'legacy' };
  return { dataDir: userDataDir(env), source: 'default' };
}

/** The line said at start when an earlier version's `./.rotscope` is used. */
export function legacyNotice(choice: DataDirChoice, env: Env): string | undefined {
  if (choice.source !== 'legacy') return undefined;
  return (
    `using the data directory ${choice.dataDir} of an earlier rotscope version; the default is now ` +
    `${userDataDir(env)} (the same from every folder): move it there, or set ROTSCOPE_DATA_DIR`
  );
}
