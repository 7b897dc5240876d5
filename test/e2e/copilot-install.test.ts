/**
 * `rotscope copilot install` (src/cli/copilot-install.ts) as the real `bin/rotscope.js` in a child
 * process: `telemetry.capture.toolOutput` merged into an existing ~/.copilot/settings.json
 * ($COPILOT_HOME) with a backup, idempotent, `--uninstall` putting back exactly what was there, a
 * warning before a `false` the user set is replaced or when the shell already sends telemetry
 * elsewhere, `--dry-run` writing nothing, `--print-env` printing only the shell lines, `--help`.
 * That the real Copilot CLI reads what it writes is shown by test/e2e/copilot-real (the healthy
 * scenario is set up by this command).
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));
const TOKEN = 'rs_test_0123456789abcdef';
const MINE = {
  model: 'gpt-4o',
  telemetry: { capture: { toolOutput: false, prompts: false } },
  hooks: { sessionStart: [{ command: 'echo hi' }] },
};

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'rotscope-copilot-install-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, 'copilot', ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ...env,
    },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = () => path.join(home, '.copilot');
const settingsFile = () => path.join(dir(), 'settings.json');
const read = () => JSON.parse(readFileSync(settingsFile(), 'utf8')) as Record<string, unknown>;
const backups = () => readdirSync(dir()).filter((f) => f.includes('.rotscope-backup'));

describe('rotscope copilot install', () => {
  it('merges telemetry.capture.toolOutput with a backup and a warning, once, and --uninstall restores the file exactly', () => {
    mkdirSync(dir());
    const original = `${JSON.stringify(MINE, null, 2)}\n`;
    writeFileSync(settingsFile(), original);

    const dry = run(['install', '--dry-run', '--url', 'http://10.1.2.3:4318']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`--- ${settingsFile()}`);
    expect(dry.stdout).toMatch(/^\+ {7}"toolOutput": true,?$/m);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(original);
    expect(readdirSync(dir())).toEqual(['settings.json']);

    const first = run(['install', '--url', 'http://10.1.2.3:4318/', '--token', TOKEN]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('had telemetry.capture.toolOutput false');
    expect(read()).toEqual({
      ...MINE,
      telemetry: { capture: { toolOutput: true, prompts: false } },
    });
    expect(backups()).toHaveLength(1);
    // the endpoint is only read from the environment: the lines for the profile
    expect(first.stdout).toContain("export OTEL_EXPORTER_OTLP_ENDPOINT='http://10.1.2.3:4318'");
    expect(first.stdout).toContain(
      `export OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ${TOKEN}'`,
    );

    const again = run(['install', '--url', 'http://10.1.2.3:4318']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already installed, nothing to change');
    expect(backups()).toHaveLength(1);

    const un = run(['install', '--uninstall']);
    expect(un.code, un.stderr).toBe(0);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(original);
    expect(un.stdout).toContain('remove these lines from your shell profile');
    expect(existsSync(path.join(dir(), 'rotscope-install.json'))).toBe(false);
    expect(run(['install', '--uninstall']).stdout).toContain('not installed, nothing to change');
  });

  it('creates settings.json under $COPILOT_HOME when there is none, and --uninstall removes it again', () => {
    const copilotHome = path.join(home, 'elsewhere');
    const first = run(['install'], { COPILOT_HOME: copilotHome });
    expect(first.code, first.stderr).toBe(0);
    const file = path.join(copilotHome, 'settings.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      telemetry: { capture: { toolOutput: true } },
    });
    expect(first.stdout).toContain("export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:4318'");
    expect(run(['install', '--uninstall'], { COPILOT_HOME: copilotHome }).code).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(dir())).toBe(false); // nothing in ~/.copilot
  });

  it('--print-env prints only the shell lines, warning when the shell sends telemetry elsewhere', () => {
    const r = run(['install', '--print-env', '--url', 'http://127.0.0.1:4318'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318',
      COPILOT_OTEL_FILE_EXPORTER_PATH: '/tmp/copilot-otel.jsonl',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:4318'\n");
    expect(r.stderr).toContain(
      'this replaces your exporter: OTEL_EXPORTER_OTLP_ENDPOINT=https://collector.example:4318',
    );
    expect(r.stderr).toContain('COPILOT_OTEL_FILE_EXPORTER_PATH');
    expect(existsSync(dir())).toBe(false);
  });

  it('refuses a bad usage, and --help names the flags', () => {
    expect(run(['install', '--url', 'not a url']).code).toBe(2);
    expect(run(['uninstall']).code).toBe(2);
    const help = run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotscope copilot install [--url URL] [--token TOKEN]');
  });
});
