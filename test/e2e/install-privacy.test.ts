/**
 * Every installer as a user on a shared laptop runs it (issue 36 §2, §3): the real
 * bin/rotscope.js in child processes, from a folder that is not the checkout, with HOME a
 * temporary folder holding the user's own settings (mode 0644, an exporter of theirs).
 * - Secrets stay private: after an install, a second install with another token, and an
 *   uninstall, every file under HOME that holds a token is mode 0600, and each settings file has
 *   at most one backup (also 0600). Claude Code's token is not in settings.json at all: a 0600
 *   file read by the hooks and by the otelHeadersHelper install writes.
 * - Install respects what was there: the exporter of the user's it replaces is named before it is
 *   replaced (`--dry-run` names it and writes nothing), `--keep-exporter` leaves it and prints
 *   how to fan out with a Collector, uninstall puts it back; Claude Code's metrics stay on the
 *   user's endpoint (never sent to rotscope, which drops them).
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';

const root = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-install-privacy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const T1 = 'rs_ingest_first_0123456789abcdefghij';
const T2 = 'rs_ingest_second_9876543210zyxwvutsrq';
const URL = 'http://127.0.0.1:4318';

/** One installer: its command, the user's files before it (path under HOME → text), where the exporter of theirs is. */
interface Case {
  agent: string;
  files: Record<string, string>;
  /** Environment of the shell install runs from (beyond HOME). */
  shell?: Record<string, string>;
  /** What install must name before replacing it. */
  replaces: string;
  /** Settings files the installer changes (under HOME), each allowed one backup. */
  settings: string[];
  /** The user's files as they must be after --keep-exporter (their exporter untouched). */
  keeps: (home: string) => void;
}

const CASES: Case[] = [
  {
    agent: 'claude-code',
    files: {
      '.claude/settings.json': JSON.stringify({
        model: 'opus',
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-team=blue',
          OTEL_METRICS_EXPORTER: 'otlp',
        },
      }),
    },
    replaces: 'OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.example:4318',
    settings: ['.claude/settings.json'],
    keeps: (home) => {
      const env = json(home, '.claude/settings.json').env;
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://collector.example:4318');
      expect(env.OTEL_EXPORTER_OTLP_HEADERS).toBe('x-team=blue');
    },
  },
  {
    agent: 'codex',
    files: {
      '.codex/config.toml':
        'model = "gpt-5.5"\n\n[otel]\nexporter = { otlp-http = { endpoint = "https://collector.example/v1/logs", protocol = "binary" } }\n',
    },
    replaces: '[otel] exporter = otlp-http https://collector.example/v1/logs',
    settings: ['.codex/config.toml'],
    keeps: (home) =>
      expect(readFileSync(path.join(home, '.codex/config.toml'), 'utf8')).toContain(
        'https://collector.example/v1/logs',
      ),
  },
  {
    agent: 'gemini',
    files: { '.gemini/settings.json': JSON.stringify({ telemetry: { target: 'gcp' } }) },
    replaces: 'telemetry.target="gcp"',
    settings: ['.gemini/settings.json', '.gemini/.env'],
    keeps: (home) => expect(json(home, '.gemini/settings.json').telemetry.target).toBe('gcp'),
  },
  {
    agent: 'qwen',
    files: {
      '.qwen/settings.json': JSON.stringify({
        telemetry: { otlpEndpoint: 'http://collector.example:4317' },
      }),
    },
    replaces: 'telemetry.otlpEndpoint="http://collector.example:4317"',
    settings: ['.qwen/settings.json', '.qwen/.env'],
    keeps: (home) =>
      expect(json(home, '.qwen/settings.json').telemetry.otlpEndpoint).toBe(
        'http://collector.example:4317',
      ),
  },
  {
    agent: 'opencode',
    files: { '.config/opencode/opencode.json': JSON.stringify({ theme: 'dark' }) },
    shell: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318' },
    replaces: 'OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.example:4318',
    settings: ['.config/opencode/opencode.json'],
    keeps: () => {},
  },
  {
    agent: 'copilot',
    files: { '.copilot/settings.json': JSON.stringify({ model: 'x' }) },
    shell: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318' },
    replaces: 'OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.example:4318',
    settings: ['.copilot/settings.json'],
    keeps: () => {},
  },
];

function json(home: string, file: string) {
  return JSON.parse(readFileSync(path.join(home, file), 'utf8'));
}

/** A fresh HOME with the user's files (mode 0644, as editors write them) and a work folder. */
function userHome(name: string, files: Record<string, string>): { home: string; work: string } {
  const home = path.join(root, name, 'home');
  const work = path.join(root, name, 'work');
  mkdirSync(work, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
    writeFileSync(path.join(home, file), text, { mode: 0o644 });
  }
  return { home, work };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** Every file under HOME holding a token: readable by its owner only. Returns how many there are. */
function expectTokensPrivate(home: string, when: string): number {
  let holding = 0;
  for (const file of filesUnder(home)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes(T1) && !text.includes(T2)) continue;
    holding++;
    expect((statSync(file).mode & 0o777).toString(8), `${file} ${when}`).toBe('600');
  }
  return holding;
}

/** Each settings file: at most one backup, private. */
function expectOneBackupEach(home: string, settings: string[], when: string): void {
  for (const file of settings) {
    const dir = path.dirname(path.join(home, file));
    const backups = readdirSync(dir).filter((n) =>
      n.startsWith(`${path.basename(file)}.rotscope-backup`),
    );
    expect(backups.length, `${file} ${when}: ${backups.join(', ')}`).toBeLessThanOrEqual(1);
    for (const b of backups)
      expect((statSync(path.join(dir, b)).mode & 0o777).toString(8), b).toBe('600');
  }
}

function install(c: Case, home: string, work: string, args: string[]): Promise<CliResult> {
  return runCli([c.agent, 'install', ...args], {
    cwd: work,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: '',
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
      GEMINI_CLI_HOME: '',
      COPILOT_HOME: '',
      ROTSCOPE_URL: '',
      ROTSCOPE_TOKEN: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      ...c.shell,
    },
    timeoutMs: 60_000,
  });
}

describe(
  'every installer keeps secrets private and says what it replaces',
  { timeout: 120_000 },
  () => {
    it.each(CASES.map((c) => [c.agent, c] as const))('%s', async (_agent, c) => {
      const { home, work } = userHome(c.agent, c.files);
      const before = Object.fromEntries(
        Object.keys(c.files).map((f) => [f, readFileSync(path.join(home, f), 'utf8')]),
      );

      const dry = await install(c, home, work, ['--url', URL, '--token', T1, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout + dry.stderr).toContain(`this replaces your exporter: ${c.replaces}`);
      for (const [f, text] of Object.entries(before))
        expect(readFileSync(path.join(home, f), 'utf8'), 'dry run writes nothing').toBe(text);
      expect(filesUnder(home)).toHaveLength(Object.keys(c.files).length);

      const first = await install(c, home, work, ['--url', URL, '--token', T1]);
      expect(first.code, first.stderr).toBe(0);
      // named before it happens: the warning comes before the line saying what was installed
      expect(first.stdout + first.stderr).toContain(`this replaces your exporter: ${c.replaces}`);
      expectTokensPrivate(home, 'after install');
      expectOneBackupEach(home, c.settings, 'after install');

      const second = await install(c, home, work, ['--url', URL, '--token', T2]);
      expect(second.code, second.stderr).toBe(0);
      expectTokensPrivate(home, 'after the second install');
      expectOneBackupEach(home, c.settings, 'after the second install');

      const un = await install(c, home, work, ['--uninstall']);
      expect(un.code, un.stderr).toBe(0);
      expectTokensPrivate(home, 'after uninstall');
      expectOneBackupEach(home, c.settings, 'after uninstall');
      // the backup is the user's file as it was before rotscope
      const [settings] = c.settings;
      expect(readFileSync(path.join(home, `${settings}.rotscope-backup`), 'utf8')).toBe(
        before[settings!],
      );

      // --keep-exporter on a fresh copy: their exporter stays, and how to send to both is said
      const kept = userHome(`${c.agent}-keep`, c.files);
      const keep = await install(c, kept.home, kept.work, [
        '--url',
        URL,
        '--token',
        T1,
        '--keep-exporter',
      ]);
      expect(keep.code, keep.stderr).toBe(0);
      expect(keep.stdout).toContain('kept your exporter');
      expect(keep.stdout).toContain('OpenTelemetry Collector');
      expect(keep.stdout + keep.stderr).not.toContain('this replaces your exporter');
      c.keeps(kept.home);
      expectTokensPrivate(kept.home, 'after --keep-exporter');
    });

    it("claude-code: the token only in a 0600 file; the user's metrics stay off rotscope", async () => {
      const c = CASES[0]!;
      const { home, work } = userHome('claude-metrics', c.files);
      const r = await install(c, home, work, ['--url', URL, '--token', T1]);
      expect(r.code, r.stderr).toBe(0);
      const file = path.join(home, '.claude/settings.json');
      expect(readFileSync(file, 'utf8')).not.toContain(T1);
      expect(expectTokensPrivate(home, 'install')).toBe(1); // settings.json.rotscope-token alone
      const env = json(home, '.claude/settings.json').env;
      expect(env).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: URL,
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://collector.example:4318/v1/metrics',
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-team=blue',
        OTEL_METRICS_EXPORTER: 'otlp',
      });
      expect(env.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined(); // theirs is not sent to rotscope
      expect(r.stdout).toContain(
        'your metrics keep going to http://collector.example:4318/v1/metrics',
      );

      // metrics to the default endpoint, now rotscope's: taken off OTLP, and said
      const bare = userHome('claude-metrics-bare', {
        '.claude/settings.json': JSON.stringify({ env: { OTEL_METRICS_EXPORTER: 'otlp,console' } }),
      });
      const r2 = await install(c, bare.home, bare.work, ['--url', URL]);
      expect(r2.code, r2.stderr).toBe(0);
      expect(r2.stdout).not.toContain('this replaces your exporter');
      expect(json(bare.home, '.claude/settings.json').env.OTEL_METRICS_EXPORTER).toBe('console');
      expect(r2.stdout).toContain('which does not read them');
      const un = await install(c, bare.home, bare.work, ['--uninstall']);
      expect(un.code, un.stderr).toBe(0);
      expect(json(bare.home, '.claude/settings.json')).toEqual({
        env: { OTEL_METRICS_EXPORTER: 'otlp,console' },
      });
    });
  },
);
