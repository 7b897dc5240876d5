/**
 * What the agent install commands (`claude-code install`: ./claude-code-install.ts, `codex
 * install`: ./codex-install.ts, `gemini install`: ./gemini-install.ts) share: their flags and
 * the usage check, the default server, reading a settings.json, the backup taken before a file
 * changes and the diff `--dry-run` prints.
 */
import { chmodSync, copyFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { flagError } from './flag-suggest.ts';

export type Env = Record<string, string | undefined>;
export type Obj = Record<string, unknown>;
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The default server: `rotscope serve` on this machine. */
export const DEFAULT_URL = 'http://127.0.0.1:4318';

export const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;

type Flags = Record<string, { type: 'string' | 'boolean' }>;
type FlagValues<F extends Flags> = {
  [K in keyof F]?: F[K]['type'] extends 'string' ? string : boolean;
};

/**
 * The flags of `<agent> install ...`: `install` the one positional, and not both `--user` and
 * `--project` (for the commands that have them). Null when the usage is wrong: the reason and
 * `usage` are on stderr (exit 2).
 */
export function installFlags<F extends Flags>(
  argv: string[],
  io: Io,
  usage: string,
  flags: F,
): FlagValues<F> | null {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: flags,
      allowPositionals: true,
      strict: true,
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (error) {
    const command = /rotscope ([\w-]+ install)/.exec(usage)?.[1] ?? 'install';
    const message = flagError(command, error, Object.keys(flags));
    if (message === undefined) throw error;
    io.stderr(`${message}\n${usage}`);
    return null;
  }
  if (positionals.length !== 1 || positionals[0] !== 'install' || (values.user && values.project)) {
    io.stderr(usage);
    return null;
  }
  return values as FlagValues<F>;
}

/**
 * A settings.json's text as an object (an empty file: `{}`); undefined, with the reason on
 * stderr, when it is not a JSON object (the file is then left unchanged, exit 1).
 */
export function parseSettingsJson(file: string, text: string, io: Io): Obj | undefined {
  try {
    const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (!obj(parsed)) throw new Error('not a JSON object');
    return parsed as Obj;
  } catch (error) {
    io.stderr(
      `rotscope: ${file} is not valid settings JSON (${(error as Error).message}): left unchanged\n`,
    );
    return undefined;
  }
}

/** Copies `file` to `<file>.rotscope-backup-<time>` (private with `secret`) and says where. */
export function backup(file: string, io: Io, secret = false): void {
  const to = `${file}.rotscope-backup-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  copyFileSync(file, to);
  if (secret) chmodSync(to, 0o600);
  io.stdout(`backup: ${to}\n`);
}

/** A line diff (longest common subsequence) in unified style: `-` removed, `+` added, ` ` kept. */
export function lineDiff(before: string, after: string): string {
  const a = before === '' ? [] : before.split('\n');
  const b = after.split('\n');
  const lcs = a.map(() => new Array<number>(b.length + 1).fill(0));
  lcs.push(new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] =
        a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(`+ ${b[j++]}`);
    } else {
      out.push(`- ${a[i++]}`);
    }
  }
  return out.join('\n') + '\n';
}

/**
 * What `--dry-run` prints for a file: its name before and after, then the line diff of its text
 * (trailing white space aside), passed through `shown` (gemini's `.env`: the token masked).
 */
export function fileDiff(
  file: string,
  before: string,
  after: string,
  shown: (diff: string) => string = (diff) => diff,
): string {
  return `--- ${file}\n+++ ${file} (after)\n${shown(lineDiff(before.trimEnd(), after.trimEnd()))}`;
}
