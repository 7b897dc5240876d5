/**
 * `rotscope claude-code install [--user|--project] [--uninstall] [--dry-run]`: adds rotscope's
 * status line and compaction hooks (PreCompact, PostCompact, SessionStart with matcher `compact`)
 * to Claude Code's settings.json, merged with what is there. User settings live in
 * `$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`), project settings in
 * `.claude/settings.json` of the current directory. A changed file is backed up first
 * (`settings.json.rotscope-backup-<time>`); running it twice changes nothing; `--dry-run` prints
 * the diff and writes nothing; `--uninstall` removes only rotscope's entries.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

type Env = Record<string, string | undefined>;
type Obj = Record<string, unknown>;
interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const USAGE = 'usage: rotscope claude-code install [--user|--project] [--uninstall] [--dry-run]\n';
/** The hook events rotscope listens to, with their matcher. */
const HOOK_EVENTS: ReadonlyArray<[event: string, matcher: string]> = [
  ['PreCompact', ''],
  ['PostCompact', ''],
  ['SessionStart', 'compact'],
];

const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;

/** The commands written into settings.json: this installation's node and bin/, absolute. */
export function rotscopeCommands(): { statusline: string; hook: string } {
  const bin = fileURLToPath(new URL('../../bin/', import.meta.url));
  const quote = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;
  return {
    statusline: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-statusline.cjs'))}`,
    hook: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope.js'))} hook`,
  };
}

/** True for a command rotscope wrote (its status line or its hook). */
function isOurs(command: unknown): boolean {
  return (
    typeof command === 'string' &&
    (/rotscope-statusline\.cjs"?$/.test(command) || /rotscope(\.js"?)? hook$/.test(command))
  );
}

/** settings.json without rotscope's entries (empty hook lists and objects left out). */
function withoutOurs(settings: Obj): Obj {
  const next: Obj = { ...settings };
  if (isOurs(obj(next.statusLine)?.command)) delete next.statusLine;
  const hooks = obj(next.hooks);
  if (hooks) {
    const kept: Obj = {};
    for (const [event, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups)) {
        kept[event] = groups;
        continue;
      }
      const left = groups
        .map((group) => {
          const g = obj(group);
          if (!g || !Array.isArray(g.hooks)) return group;
          const inner = g.hooks.filter((h) => !isOurs(obj(h)?.command));
          return inner.length === 0 ? undefined : { ...g, hooks: inner };
        })
        .filter((group) => group !== undefined);
      if (left.length > 0) kept[event] = left;
    }
    if (Object.keys(kept).length > 0) next.hooks = kept;
    else delete next.hooks;
  }
  return next;
}

/** settings.json with rotscope's status line and hooks (replacing any earlier ones of ours). */
export function withOurs(settings: Obj, commands = rotscopeCommands()): Obj {
  const next = withoutOurs(settings);
  next.statusLine = { type: 'command', command: commands.statusline, padding: 0 };
  const hooks: Obj = { ...obj(next.hooks) };
  for (const [event, matcher] of HOOK_EVENTS) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [
      ...groups,
      { matcher, hooks: [{ type: 'command', command: commands.hook, timeout: 10 }] },
    ];
  }
  next.hooks = hooks;
  return next;
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

/** Where settings.json is for `--user` (default) or `--project`. */
export function settingsPath(scope: 'user' | 'project', env: Env, cwd = process.cwd()): string {
  if (scope === 'project') return path.join(cwd, '.claude', 'settings.json');
  const dir = env.CLAUDE_CONFIG_DIR || path.join(env.HOME || homedir(), '.claude');
  return path.join(dir, 'settings.json');
}

/** The `claude-code` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export async function claudeCodeCommand(argv: string[], io: Io, env: Env): Promise<number> {
  let values: { user?: boolean; project?: boolean; uninstall?: boolean; 'dry-run'?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        user: { type: 'boolean' },
        project: { type: 'boolean' },
        uninstall: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (positionals.length !== 1 || positionals[0] !== 'install' || (values.user && values.project)) {
    io.stderr(USAGE);
    return 2;
  }
  const file = settingsPath(values.project ? 'project' : 'user', env);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  let settings: Obj;
  try {
    const parsed: unknown = before.trim() === '' ? {} : JSON.parse(before);
    if (!obj(parsed)) throw new Error('not a JSON object');
    settings = parsed as Obj;
  } catch (error) {
    io.stderr(
      `rotscope: ${file} is not valid settings JSON (${(error as Error).message}): left unchanged\n`,
    );
    return 1;
  }
  const next = values.uninstall ? withoutOurs(settings) : withOurs(settings);
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const unchanged = JSON.stringify(next) === JSON.stringify(settings);
  if (values['dry-run']) {
    io.stdout(
      unchanged
        ? `${file}: nothing to change\n`
        : `--- ${file}\n+++ ${file} (after)\n${lineDiff(before.trimEnd(), after.trimEnd())}`,
    );
    return 0;
  }
  if (unchanged) {
    io.stdout(
      `${file}: ${values.uninstall ? 'rotscope is not installed' : 'already installed'}, nothing to change\n`,
    );
    return 0;
  }
  if (before !== '') {
    const backup = `${file}.rotscope-backup-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(file, backup);
    io.stdout(`backup: ${backup}\n`);
  }
  const oldStatus = obj(settings.statusLine)?.command;
  if (!values.uninstall && oldStatus !== undefined && !isOurs(oldStatus))
    io.stdout(`replaced your status line (${String(oldStatus)}); it is in the backup\n`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, after);
  io.stdout(
    values.uninstall
      ? `${file}: rotscope's status line and hooks removed\n`
      : `${file}: status line and hooks (PreCompact, PostCompact, SessionStart:compact) installed\n`,
  );
  return 0;
}
