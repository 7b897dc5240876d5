/**
 * `rotscope opencode install` (src/cli/opencode-install.ts), as the real `bin/rotscope.js` in a
 * child process: `experimental.openTelemetry` merged into an existing opencode.json with a backup,
 * the shell-profile lines printed (the token masked in --dry-run), a warning before replacing an
 * endpoint the shell already exports, idempotent, --uninstall putting back what was there,
 * --project, --help and refusals. That the real OpenCode reads what it writes and prints is shown
 * by the real-CLI scenarios (test/e2e/opencode-real: the healthy one is set up by this command).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));
const TOKEN = 'rs_test_0123456789abcdef';
const MINE = {
  $schema: 'https://opencode.ai/config.json',
  model: 'anthropic/claude-sonnet-4-6',
  experimental: { openTelemetry: false, batch_tool: true },
};

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'rotscope-opencode-install-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}, cwd = home) {
  const r = spawnSync(process.execPath, [BIN, 'opencode', ...args], {
    cwd,
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

const dir = () => path.join(home, '.config', 'opencode');
const configFile = () => path.join(dir(), 'opencode.json');
const read = () => JSON.parse(readFileSync(configFile(), 'utf8')) as Record<string, unknown>;
const backups = () => readdirSync(dir()).filter((f) => f.includes('.rotscope-backup'));

describe('rotscope opencode install (the real bin)', () => {
  it('merges experimental.openTelemetry with a backup, prints the profile lines, once; --uninstall restores', () => {
    mkdirSync(dir(), { recursive: true });
    writeFileSync(configFile(), JSON.stringify(MINE, null, 2));

    const dry = run(['install', '--dry-run', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`--- ${configFile()}`);
    expect(dry.stdout).toMatch(/^\+ {5}"openTelemetry": true,?$/m);
    expect(dry.stdout).toContain("OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ********cdef'");
    expect(dry.stdout).not.toContain(TOKEN);
    expect(read()).toEqual(MINE); // nothing written
    expect(readdirSync(dir())).toEqual(['opencode.json']);

    const first = run(['install', '--url', 'http://10.1.2.3:4318/', '--token', TOKEN], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(first.code, first.stderr).toBe(0);
    expect(read()).toEqual({ ...MINE, experimental: { openTelemetry: true, batch_tool: true } });
    expect(backups()).toHaveLength(1);
    expect(first.stdout).toContain(
      'warning: this replaces your exporter: OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318',
    );
    const lines = first.stdout.split('\n').filter((l) => l.startsWith('  export '));
    expect(lines).toEqual([
      '  export OTEL_EXPORTER_OTLP_ENDPOINT=http://10.1.2.3:4318',
      `  export OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ${TOKEN}'`,
      '  export OTEL_BSP_SCHEDULE_DELAY=100',
    ]);

    const again = run(['install', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]);
    expect(again.stdout).toContain('already set');
    expect(again.stdout).not.toContain('warning');
    expect(backups()).toHaveLength(1);

    const un = run(['install', '--uninstall']);
    expect(un.code).toBe(0);
    expect(read()).toEqual(MINE);
    expect(readdirSync(dir())).not.toContain('rotscope-install.json');
    expect(run(['install', '--uninstall']).stdout).toContain('rotscope is not installed');
  });

  it('creates opencode.json when there is none (XDG_CONFIG_HOME), and --uninstall removes it again', () => {
    const xdg = path.join(home, 'xdg');
    expect(run(['install'], { XDG_CONFIG_HOME: xdg }).code).toBe(0);
    const file = path.join(xdg, 'opencode', 'opencode.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      experimental: { openTelemetry: true },
    });
    expect(run(['install', '--uninstall'], { XDG_CONFIG_HOME: xdg }).code).toBe(0);
    expect(readdirSync(path.join(xdg, 'opencode')).filter((f) => !f.includes('backup'))).toEqual(
      [],
    );
  });

  it('--project writes ./opencode.json; --help; refusals', () => {
    const project = path.join(home, 'project');
    mkdirSync(project);
    const out = run(['install', '--project'], {}, project);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(project, 'opencode.json'), 'utf8'))).toEqual({
      experimental: { openTelemetry: true },
    });
    expect(readdirSync(path.join(project, '.opencode'))).toEqual(['rotscope-install.json']);
    expect(readdirSync(home)).toEqual(['project']); // nothing in ~/.config

    const help = run(['install', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotscope opencode install');

    writeFileSync(path.join(project, 'opencode.json'), '{ "model": // a comment\n }');
    const bad = run(['install', '--project'], {}, project);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not valid settings JSON');
    expect(run([]).code).toBe(2);
    expect(run(['install', '--user', '--project']).code).toBe(2);
    expect(run(['install', '--url', 'ftp://x']).code).toBe(2);
    expect(run(['install', '--token', 'has space']).code).toBe(2);
  });
});
