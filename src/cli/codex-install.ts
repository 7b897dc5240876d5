/**
 * `rotscope codex install [--url URL] [--token TOKEN] [--uninstall] [--dry-run]`: points Codex
 * CLI's OpenTelemetry export at a rotscope server, in the `[otel]` section of
 * `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`): `exporter` (log events) and
 * `trace_exporter` (spans) as OTLP/HTTP protobuf to `URL/v1/logs` and `URL/v1/traces`, with
 * `authorization = "Bearer TOKEN"` when a token is given (conventions §5.0.2). The URL defaults
 * to `$ROTSCOPE_URL`, else `http://127.0.0.1:4318`; the token to `$ROTSCOPE_TOKEN`.
 *
 * Merged with what is there: the rest of the file is left as written (comments too); of
 * `[otel]`, only the two exporters are rotscope's, the other keys (`environment`,
 * `log_user_prompt`, ...) stay. A changed file is backed up first
 * (`config.toml.rotscope-backup-<time>`); running it twice changes nothing; `--dry-run` prints
 * the diff and writes nothing; `--uninstall` puts back the `[otel]` section the file had before
 * rotscope's (from the newest backup without it), else removes rotscope's exporters.
 *
 * TOML is read and written with smol-toml; the file is edited as text, section by section, and
 * every result is parsed again and checked to mean what was intended before it is written.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import {
  backup,
  backupPath,
  DEFAULT_URL,
  fanOutAdvice,
  replacesExporter,
  writePrivate,
  fileDiff,
  installFlags,
  type Env,
  type Io,
  type AgentInstaller,
} from './install-shared.ts';

type Table = Record<string, unknown>;

export const CODEX_USAGE =
  'usage: rotscope codex install [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]\n' +
  '  --url URL        the rotscope server (default $ROTSCOPE_URL, else http://127.0.0.1:4318)\n' +
  '  --token TOKEN    an ingest token (default $ROTSCOPE_TOKEN); config.toml is then made private (0600)\n' +
  '  --keep-exporter  keep [otel] exporters of yours and print how to send to both with an\n' +
  '                   OpenTelemetry Collector; without it, install says what it replaces first\n' +
  '  --uninstall      put back the [otel] section from before;  --dry-run  print the change only\n';

/** The comment line rotscope writes above its `[otel]` section: how it knows the section is its. */
export const MARKER =
  '# rotscope codex install: Codex telemetry to rotscope (undo: rotscope codex install --uninstall)';

const table = (v: unknown): Table | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
    ? (v as Table)
    : undefined;

/** Where config.toml is: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`. */
export function codexConfigPath(env: Env): string {
  const home = env.CODEX_HOME || path.join(env.HOME || homedir(), '.codex');
  return path.join(home, 'config.toml');
}

/** rotscope's two exporters for a server URL (and token). */
export function rotscopeExporters(url: string, token: string | undefined): Table {
  const base = url.replace(/\/+$/, '');
  const exporter = (signal: 'logs' | 'traces') => ({
    'otlp-http': {
      endpoint: `${base}/v1/${signal}`,
      protocol: 'binary',
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    },
  });
  return { exporter: exporter('logs'), trace_exporter: exporter('traces') };
}

/** The first key of a table header line (`[otel]`, `[otel.exporter."otlp-http"]`, `[[x]]`), else null. */
function headerKey(line: string): string | null {
  const m = /^\s*\[\[?\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)/.exec(line);
  if (m === null || !/^\s*\[/.test(line)) return null;
  const key = m[1]!;
  return key.startsWith('"') || key.startsWith("'") ? key.slice(1, -1) : key;
}

const isBlankOrComment = (line: string) => /^\s*(#.*)?$/.test(line);

/** The lines of the `[otel]` tables (and root `otel...` keys), as [start, end) ranges. */
function otelRanges(lines: readonly string[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let inRoot = true;
  let start = -1;
  const close = (end: number) => {
    // comments and blank lines before the next table belong to it, not to [otel]
    while (end > start && isBlankOrComment(lines[end - 1]!)) end--;
    // the marker line above the section is rotscope's too
    if (start > 0 && lines[start - 1] === MARKER) start--;
    ranges.push([start, end]);
    start = -1;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const key = headerKey(line);
    if (key !== null) {
      inRoot = false;
      if (key === 'otel' && start < 0) start = i;
      else if (key !== 'otel' && start >= 0) close(i);
    } else if (inRoot && /^\s*otel\s*[.=]/.test(line)) {
      ranges.push([i, i + 1]);
    }
  }
  if (start >= 0) close(lines.length);
  return ranges;
}

/** The text with its otel lines replaced by `section` (at the first one's place, else at the end). */
function replaceOtel(text: string, section: string | null): string {
  const lines = text.split('\n');
  const ranges = otelRanges(lines);
  const out: string[] = [];
  let at = -1;
  let next = 0;
  for (const [start, end] of ranges) {
    out.push(...lines.slice(next, start));
    if (at < 0) at = out.length;
    next = end;
  }
  out.push(...lines.slice(next));
  if (section === null) return out.join('\n').replace(/\n{3,}/g, '\n\n');
  const block = section.replace(/\n+$/, '').split('\n');
  if (at < 0) {
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    if (out.length > 0) out.push('');
    out.push(...block, '');
  } else {
    out.splice(at, 0, ...block);
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

/** The text of a file's `[otel]` tables as written (marker included), or null when it has none. */
function otelSectionText(text: string): string | null {
  const lines = text.split('\n');
  const ranges = otelRanges(lines);
  if (ranges.length === 0) return null;
  return ranges.map(([s, e]) => lines.slice(s, e).join('\n')).join('\n\n');
}

/** Where an [otel] exporter sends: its endpoint, else the exporter's kind (`otlp-grpc`, `none`). */
function exporterTarget(value: unknown): string {
  const t = table(value);
  if (t === undefined) return JSON.stringify(value);
  for (const [kind, config] of Object.entries(t)) {
    const endpoint = table(config)?.endpoint;
    if (typeof endpoint === 'string') return `${kind} ${endpoint}`;
    return kind;
  }
  return '{}';
}

/** True when the file's `[otel]` section is the one rotscope wrote. */
function isOurs(text: string): boolean {
  return text.split('\n').includes(MARKER);
}

/** rotscope's `[otel]` section: the current otel keys with rotscope's exporters. */
function ourSection(current: Table | undefined, exporters: Table): string {
  const otel = { ...(current ?? {}), ...exporters };
  return `${MARKER}\n${stringify({ otel }).trim()}\n`;
}

/** The `[otel]` section to put back on uninstall: the newest backup's without rotscope, else the current one without rotscope's exporters. */
function previousSection(file: string, current: Table | undefined): string | null {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.rotscope-backup-`;
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix));
  } catch {
    names = [];
  }
  // the one backup (the file before rotscope), then earlier versions' timestamped ones
  const single = path.basename(backupPath(file));
  const candidates = [
    ...(existsSync(path.join(dir, single)) ? [single] : []),
    ...names.sort().reverse(),
  ];
  for (const name of candidates) {
    const text = readFileSync(path.join(dir, name), 'utf8');
    if (isOurs(text)) continue;
    try {
      parse(text);
    } catch {
      continue;
    }
    return otelSectionText(text);
  }
  const rest = { ...(current ?? {}) };
  delete rest.exporter;
  delete rest.trace_exporter;
  return Object.keys(rest).length === 0 ? null : `${stringify({ otel: rest }).trim()}\n`;
}

/** A value as JSON with sorted keys: equal meaning, equal text (parsed tables have no prototype). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_key, x: unknown) => {
    const t = table(x);
    return t === undefined
      ? x
      : Object.fromEntries(
          Object.keys(t)
            .sort()
            .map((k) => [k, t[k]]),
        );
  });
}

/** What the edited file must mean: everything but `otel` unchanged, `otel` as intended. */
function checkResult(after: string, before: Table, otel: Table | undefined): string | null {
  let parsed: Table;
  try {
    parsed = parse(after) as Table;
  } catch (error) {
    return (error as Error).message;
  }
  const { otel: gotOtel, ...rest } = parsed;
  const { otel: _old, ...wantRest } = before;
  if (canonical(rest) !== canonical(wantRest)) return 'the rest of the file would change';
  if (canonical(gotOtel) !== canonical(otel))
    return 'the [otel] section would not be the intended one';
  return null;
}

/** The `codex` command. Exit 0 done, 1 config.toml unreadable or not editable, 2 bad usage. */
export async function codexCommand(argv: string[], io: Io, env: Env): Promise<number> {
  const values = installFlags(argv, io, CODEX_USAGE, {
    url: { type: 'string' },
    token: { type: 'string' },
    uninstall: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'keep-exporter': { type: 'boolean' },
  });
  if (values === null) return 2;
  const url = values.url ?? (env.ROTSCOPE_URL || DEFAULT_URL);
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    io.stderr(`rotscope codex: --url must be an http(s) URL (got "${url}")\n${CODEX_USAGE}`);
    return 2;
  }
  const token = values.token ?? (env.ROTSCOPE_TOKEN || undefined);
  const file = codexConfigPath(env);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  let doc: Table;
  try {
    doc = parse(before) as Table;
  } catch (error) {
    io.stderr(
      `rotscope: ${file} is not valid TOML (${(error as Error).message}): left unchanged\n`,
    );
    return 1;
  }
  const current = table(doc.otel);
  // the user's own exporters (an [otel] section rotscope did not write), named before replacing
  const theirs = isOurs(before)
    ? []
    : (['exporter', 'trace_exporter'] as const)
        .filter((key) => current?.[key] !== undefined)
        .map((key) => `[otel] ${key} = ${exporterTarget(current![key])}`);
  let after: string;
  let intended: Table | undefined;
  if (values.uninstall) {
    if (!isOurs(before)) {
      io.stdout(`${file}: rotscope is not installed, nothing to change\n`);
      return 0;
    }
    const section = previousSection(file, current);
    after = replaceOtel(before, section);
    intended = section === null ? undefined : table((parse(section) as Table).otel);
  } else if (theirs.length > 0 && values['keep-exporter']) {
    after = before;
    intended = current;
  } else {
    const exporters = rotscopeExporters(url, token);
    after = replaceOtel(before, ourSection(current, exporters));
    intended = { ...(current ?? {}), ...exporters };
  }
  const problem = checkResult(after, doc, intended);
  if (problem !== null) {
    io.stderr(
      `rotscope: cannot edit ${file} safely (${problem}); left unchanged. Set [otel] by hand:\n` +
        `${ourSection(undefined, rotscopeExporters(url, token))}`,
    );
    return 1;
  }
  const unchanged = after === before;
  const kept = !values.uninstall && values['keep-exporter'] === true && theirs.length > 0;
  if (!values.uninstall && !kept) for (const what of theirs) io.stdout(replacesExporter(what));
  if (kept) {
    io.stdout(fanOutAdvice(theirs.join(', '), url, token));
    return 0;
  }
  if (values['dry-run']) {
    io.stdout(unchanged ? `${file}: nothing to change\n` : fileDiff(file, before, after));
    return 0;
  }
  if (unchanged) {
    io.stdout(`${file}: already installed, nothing to change\n`);
    return 0;
  }
  if (before !== '') backup(file, io, { installed: isOurs(before) });
  mkdirSync(path.dirname(file), { recursive: true });
  writePrivate(file, after); // it holds the token (and maybe tokens of the user's)
  io.stdout(
    values.uninstall
      ? `${file}: rotscope's [otel] exporters removed\n`
      : `${file}: [otel] exporter and trace_exporter send to ${url} (OTLP/HTTP)${token ? ' with your token' : ''}\n`,
  );
  return 0;
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: codexCommand, usage: CODEX_USAGE };
