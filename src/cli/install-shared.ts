/**
 * What the agent install commands (`claude-code install`: ./claude-code-install.ts, `codex
 * install`: ./codex-install.ts, `gemini install`: ./gemini-install.ts, qwen, opencode, copilot)
 * share: their flags and the usage check, the default server, reading a settings.json, the one
 * private backup taken before a file changes, writing a file only its owner reads, what is said
 * before an exporter of the user's is replaced, and the diff `--dry-run` prints.
 */
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { flagError } from './flag-suggest.ts';

export type Env = Record<string, string | undefined>;
export type Obj = Record<string, unknown>;
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * What an agent's installer module exports as `installer`: the `<agent>` command and its full
 * usage (`rotscope <agent> --help`). The agent's profile (src/model/agents/, `installer`) names
 * the module; src/entry.ts loads it when the command runs.
 */
export interface AgentInstaller {
  run(argv: string[], io: Io, env: Env): Promise<number>;
  usage: string;
}

/** The default server: `rotscope serve` on this machine. */
export const DEFAULT_URL = 'http://127.0.0.1:4318';

/** Two JSON values alike. */
export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A file's text; '' when there is none. */
export const readText = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

/** An install's state file (what it replaced), parsed; null when there is none or it does not parse. */
export function readInstallState<T>(file: string): T | null {
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
  } catch {
    return null;
  }
}

/**
 * The server to send to and its token: `--url` (else ROTSCOPE_URL, else the default, trailing
 * slashes cut) and `--token` (else ROTSCOPE_TOKEN; null: none). Null, with the reason on stderr
 * (exit 2), when the URL is not http(s) or the token not printable ASCII without spaces (nor
 * commas, with `noCommas`: it goes into a comma-separated header list).
 */
export function serverAndToken(
  values: { url?: string | undefined; token?: string | undefined },
  env: Env,
  io: Io,
  options: { noCommas?: boolean } = {},
): { url: string; token: string | null } | null {
  const url = (values.url ?? (env.ROTSCOPE_URL || DEFAULT_URL)).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+(\/\S*)?$/.test(url)) {
    io.stderr(
      `rotscope: --url must be an http(s) URL of a rotscope server, not ${JSON.stringify(url)}\n`,
    );
    return null;
  }
  const token = values.token ?? (env.ROTSCOPE_TOKEN || null);
  if (options.noCommas === true) {
    if ((token !== null && !/^[\x21-\x7e]+$/.test(token)) || token?.includes(',') === true) {
      io.stderr('rotscope: the token must be printable ASCII without spaces or commas\n');
      return null;
    }
  } else if (token !== null && !/^[\x21-\x7e]+$/.test(token)) {
    io.stderr('rotscope: the token must be printable ASCII without spaces\n');
    return null;
  }
  return { url, token };
}

export const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;

type Flags = Record<string, { type: 'string' | 'boolean' }>;
type FlagValues<F extends Flags> = {
  [K in keyof F]?: F[K]['type'] extends 'string' ? string : boolean;
};

/**
 * The flags of an installer that writes its settings at user or project scope (the OpenCode
 * and the settings-telemetry installers), in the order the did-you-mean hint reads them.
 */
export const SCOPED_INSTALL_FLAGS = {
  user: { type: 'boolean' },
  project: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  uninstall: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'keep-exporter': { type: 'boolean' },
} satisfies Flags;

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

/** The one backup of a file rotscope changes: `<file>.rotscope-backup`. */
export const backupPath = (file: string) => `${file}.rotscope-backup`;

/**
 * Keeps one backup of `file` before rotscope changes it, `<file>.rotscope-backup`, mode 0600 (a
 * settings file may hold a token, its own or rotscope's), and says where. The backup is the file
 * as it was before rotscope: taken when the file does not hold rotscope's settings yet
 * (`installed` false), kept as it is while they are there (a reinstall or an uninstall; none is
 * taken then when there is none, the file being rotscope's own), so two installs and an
 * uninstall leave one backup, the one worth having. Backups earlier versions
 * left (`<file>.rotscope-backup-<time>`) are made private too.
 */
export function backup(file: string, io: Io, options: { installed?: boolean } = {}): void {
  const to = backupPath(file);
  privateOldBackups(file);
  if (options.installed === true) {
    // the file as it was before rotscope is the backup already (none: rotscope created the file)
    if (existsSync(to)) io.stdout(`backup: ${to} (kept: the file before rotscope)\n`);
    return;
  }
  writePrivate(to, readFileSync(file));
  io.stdout(`backup: ${to}\n`);
}

/** Earlier versions' timestamped backups of `file`: readable by others then, private now. */
function privateOldBackups(file: string): void {
  const prefix = `${path.basename(file)}.rotscope-backup-`;
  let names: string[];
  try {
    names = readdirSync(path.dirname(file)).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) chmodSync(path.join(path.dirname(file), name), 0o600);
}

/**
 * Writes `file` readable by its owner only (0600), as is any file rotscope writes that holds (or
 * may hold) a token. An existing file is made private before the new text goes in, so the text is
 * never readable by others, not even for a moment; a symlinked file stays a symlink.
 */
export function writePrivate(file: string, text: string | Buffer): void {
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    writeFileSync(file, text);
  } else {
    const next = `${file}.${process.pid}.tmp`;
    writeFileSync(next, text, { mode: 0o600 });
    renameSync(next, file);
  }
}

/**
 * The line said before install replaces an exporter of the user's (`what`: the setting and its
 * value), also under `--dry-run`; `--keep-exporter` keeps it instead.
 */
export function replacesExporter(what: string): string {
  return (
    `warning: this replaces your exporter: ${what}. Traces and logs go to rotscope instead ` +
    '(--uninstall puts yours back; --keep-exporter leaves it and prints how to send to both)\n'
  );
}

/**
 * The exporter settings of the user's that an install over `telemetry` (a Gemini CLI or Qwen
 * Code `telemetry` object) replaces, as `telemetry.key=value`; values an earlier install wrote
 * (`earlier`) are rotscope's own and not counted.
 */
export function replacedTelemetry(
  telemetry: Obj,
  installed: Obj,
  earlier: Obj | undefined,
): string[] {
  const out: string[] = [];
  for (const key of ['otlpEndpoint', 'target', 'outfile']) {
    const had = telemetry[key];
    if (had === undefined || had === null || same(had, installed[key] ?? null)) continue;
    if (earlier !== undefined && same(had, earlier[key] ?? null)) continue;
    out.push(`telemetry.${key}=${JSON.stringify(had)}`);
  }
  return out;
}

/**
 * How to send to both the user's backend and rotscope: an OpenTelemetry Collector in front,
 * the agent's exporter pointed at it, fanning traces and logs out to both (metrics to theirs
 * only: rotscope does not read metrics).
 */
export function fanOutAdvice(kept: string, url: string, token: string | undefined | null): string {
  const base = url.replace(/\/+$/, '');
  const auth = token ? '\n    headers: { authorization: "Bearer ${env:ROTSCOPE_TOKEN}" }' : '';
  return (
    `kept your exporter: ${kept}; nothing goes to rotscope through it until it fans out.\n` +
    'To send to both, run an OpenTelemetry Collector (https://opentelemetry.io/docs/collector/) where your\n' +
    'exporter points, with an exporter for rotscope beside yours, e.g.:\n' +
    '  exporters:\n' +
    '    otlphttp/yours: { endpoint: <your backend> }\n' +
    `    otlphttp/rotscope:\n      endpoint: ${base}${auth}\n` +
    '  service:\n    pipelines:\n' +
    '      traces: { receivers: [otlp], exporters: [otlphttp/yours, otlphttp/rotscope] }\n' +
    '      logs: { receivers: [otlp], exporters: [otlphttp/yours, otlphttp/rotscope] }\n' +
    '      metrics: { receivers: [otlp], exporters: [otlphttp/yours] }\n'
  );
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
