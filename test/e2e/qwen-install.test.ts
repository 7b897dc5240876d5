/**
 * `rotscope qwen install` (src/cli/qwen-install.ts) as the real `bin/rotscope.js` in a child
 * process: the telemetry keys merged into an existing ~/.qwen/settings.json with a backup and a
 * warning for the endpoint and target it replaces, the token in ~/.qwen/.env (masked in --dry-run),
 * idempotent, --uninstall putting back exactly what was there, --help, and refusals. That the real
 * Qwen Code reads what it writes is shown by test/e2e/qwen-code-real (its healthy scenario is set up
 * by this command).
 */
import { spawnSync } from 'node:child_process';
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
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));
const TOKEN = 'rs_test_0123456789abcdef';
const MINE = {
  model: { name: 'qwen3-coder-plus' },
  security: { auth: { selectedType: 'openai' } },
  telemetry: {
    enabled: false,
    target: 'gcp',
    otlpEndpoint: 'http://collector.internal:4317',
    logPrompts: false,
    outfile: '/tmp/t.log',
  },
};

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'rotscope-qwen-install-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function run(args: string[], cwd = home) {
  const r = spawnSync(process.execPath, [BIN, 'qwen', ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = () => path.join(home, '.qwen');
const settingsFile = () => path.join(dir(), 'settings.json');
const text = () => readFileSync(settingsFile(), 'utf8');
const read = () => JSON.parse(text()) as Record<string, unknown>;
const backups = () => readdirSync(dir()).filter((f) => f.includes('.rotscope-backup'));

describe('rotscope qwen install', () => {
  it('merges the telemetry keys with a backup and warnings, once; --uninstall restores exactly', () => {
    mkdirSync(dir());
    const original = JSON.stringify(MINE, null, 2);
    writeFileSync(settingsFile(), original);

    const dry = run(['install', '--dry-run', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      'warning: this replaces your exporter: telemetry.otlpEndpoint="http://collector.internal:4317"',
    );
    expect(dry.stdout).toContain('warning: this replaces your exporter: telemetry.target="gcp"');
    expect(dry.stdout).toMatch(/^\+ {5}"otlpEndpoint": "http:\/\/10\.1\.2\.3:4318",?$/m);
    expect(dry.stdout).toContain('Authorization=Bearer%20********cdef');
    expect(dry.stdout).not.toContain(TOKEN);
    expect(text()).toBe(original); // nothing written
    expect(readdirSync(dir())).toEqual(['settings.json']);

    const first = run(['install', '--url', 'http://10.1.2.3:4318/', '--token', TOKEN]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('warning: this replaces your exporter: telemetry.otlpEndpoint=');
    expect(read()).toEqual({
      ...MINE,
      // the user's logPrompts: false is kept; the outfile would take the export: removed
      telemetry: {
        enabled: true,
        target: 'local',
        otlpEndpoint: 'http://10.1.2.3:4318',
        otlpProtocol: 'http',
        logPrompts: false,
      },
    });
    expect(backups()).toHaveLength(1);
    expect(readFileSync(path.join(dir(), backups()[0]!), 'utf8')).toBe(original);
    const env = path.join(dir(), '.env');
    expect(readFileSync(env, 'utf8')).toBe(
      `OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20${TOKEN}"\n`,
    );
    expect(statSync(env).mode & 0o777).toBe(0o600);

    const again = run(['install', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already installed');
    expect(again.stdout).not.toContain('warning');
    expect(backups()).toHaveLength(1);

    const un = run(['install', '--uninstall']);
    expect(un.code, un.stderr).toBe(0);
    expect(read()).toEqual(MINE);
    expect(readdirSync(dir()).filter((f) => !f.includes('.rotscope-backup'))).toEqual([
      'settings.json',
    ]);
  });

  it('writes a fresh settings.json (logPrompts on), removed again on --uninstall', () => {
    const first = run(['install']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).not.toContain('warning');
    expect(read()).toEqual({
      telemetry: {
        enabled: true,
        target: 'local',
        otlpEndpoint: 'http://127.0.0.1:4318',
        otlpProtocol: 'http',
        logPrompts: true,
      },
    });
    expect(run(['install', '--uninstall']).code).toBe(0);
    // the file install created goes again (its last state is in the backup)
    expect(readdirSync(dir()).filter((f) => !f.includes('.rotscope-backup'))).toEqual([]);
  });

  it('--help, --project, and refusals', () => {
    const help = run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotscope qwen install');
    const project = path.join(home, 'project');
    mkdirSync(project);
    const out = run(['install', '--project'], project);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(path.join(project, '.qwen', 'settings.json'));
    expect(readdirSync(home)).toEqual(['project']); // nothing in ~/.qwen
    expect(run(['install', '--url', 'ftp://x']).code).toBe(2);
    expect(run(['instal']).code).toBe(2);
    mkdirSync(dir());
    writeFileSync(settingsFile(), '{ not json');
    const bad = run(['install']);
    expect(bad.code).toBe(1);
    expect(text()).toBe('{ not json');
  });
});
