/**
 * `rotscope gemini install` (src/cli/gemini-install.ts), in process: the telemetry keys merged
 * into an existing ~/.gemini/settings.json with a backup, the token in ~/.gemini/.env (private,
 * masked in --dry-run), idempotent, --uninstall putting back what the keys held, --project, and
 * refusals. That the real Gemini CLI reads what it writes is shown by the real-CLI scenarios
 * (test/e2e/gemini-real, the healthy scenario is set up by this command).
 */
import { execFileSync } from 'node:child_process';
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
import { geminiCommand, geminiSettingsDir } from '../../src/cli/gemini-install.ts';

const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));
const TOKEN = 'rs_test_0123456789abcdef';
const MINE = {
  ui: { theme: 'Dracula' },
  telemetry: { enabled: false, target: 'gcp', logPrompts: false, outfile: '/tmp/t.log' },
  mcpServers: { files: { command: 'mcp-files' } },
};

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'rotscope-gemini-install-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await geminiCommand(
    args,
    { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
    { HOME: home, ...env },
  );
  return { code, stdout, stderr };
}

const dir = () => path.join(home, '.gemini');
const settingsFile = () => path.join(dir(), 'settings.json');
const read = () => JSON.parse(readFileSync(settingsFile(), 'utf8')) as Record<string, unknown>;
const backups = () => readdirSync(dir()).filter((f) => f.includes('.rotscope-backup'));

describe('rotscope gemini install', () => {
  it('merges the telemetry keys into settings.json with a backup, the token into .env, once', async () => {
    mkdirSync(dir());
    writeFileSync(settingsFile(), JSON.stringify(MINE, null, 2));

    const dry = await run([
      'install',
      '--dry-run',
      '--url',
      'http://10.1.2.3:4318',
      '--token',
      TOKEN,
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${settingsFile()}`);
    expect(dry.stdout).toMatch(/^\+ {5}"otlpEndpoint": "http:\/\/10\.1\.2\.3:4318",?$/m);
    expect(dry.stdout).toMatch(/^- {5}"outfile": "\/tmp\/t\.log",?$/m);
    expect(dry.stdout).toContain('Authorization=Bearer%20********cdef');
    expect(dry.stdout).not.toContain(TOKEN);
    expect(read()).toEqual(MINE); // nothing written
    expect(readdirSync(dir())).toEqual(['settings.json']);

    const first = await run(['install', '--url', 'http://10.1.2.3:4318/', '--token', TOKEN]);
    expect(first.code, first.stderr).toBe(0);
    expect(read()).toEqual({
      ...MINE,
      telemetry: {
        enabled: true,
        target: 'local',
        logPrompts: false, // the user's: left as it was
        otlpEndpoint: 'http://10.1.2.3:4318',
        otlpProtocol: 'http',
        traces: true,
      },
    });
    const envFile = path.join(dir(), '.env');
    expect(readFileSync(envFile, 'utf8')).toBe(
      `OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20${TOKEN}"\n`,
    );
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(backups()).toHaveLength(1);
    expect(JSON.parse(readFileSync(path.join(dir(), backups()[0]!), 'utf8'))).toEqual(MINE);

    const again = await run(['install', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]);
    expect(again.stdout).toContain('already installed, nothing to change');
    expect(backups()).toHaveLength(1);
    expect(
      (await run(['install', '--dry-run', '--url', 'http://10.1.2.3:4318', '--token', TOKEN]))
        .stdout,
    ).toContain('nothing to change');
  });

  it('--uninstall puts back what the keys held, and leaves the user’s later changes', async () => {
    mkdirSync(dir());
    writeFileSync(settingsFile(), JSON.stringify(MINE, null, 2));
    writeFileSync(path.join(dir(), '.env'), 'GEMINI_API_KEY=abc\n');
    await run(['install', '--token', TOKEN]);
    // the user changes a key of ours and adds one of theirs meanwhile
    const changed = read();
    (changed.telemetry as Record<string, unknown>).traces = false;
    (changed.telemetry as Record<string, unknown>).useCollector = true;
    writeFileSync(settingsFile(), JSON.stringify(changed, null, 2));

    const un = await run(['install', '--uninstall']);
    expect(un.code).toBe(0);
    expect(read()).toEqual({
      ...MINE,
      telemetry: { ...MINE.telemetry, traces: false, useCollector: true },
    });
    expect(readFileSync(path.join(dir(), '.env'), 'utf8')).toBe('GEMINI_API_KEY=abc\n');
    expect(readdirSync(dir())).not.toContain('rotscope-install.json');
    expect((await run(['install', '--uninstall'])).stdout).toContain('rotscope is not installed');
  });

  it('creates settings.json when there is none, and --uninstall removes it again', async () => {
    const r = await run(['install'], { GEMINI_CLI_HOME: path.join(home, 'alt') });
    expect(r.code).toBe(0);
    const file = path.join(home, 'alt', '.gemini', 'settings.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      telemetry: {
        enabled: true,
        target: 'local',
        otlpEndpoint: 'http://127.0.0.1:4318',
        otlpProtocol: 'http',
        traces: true,
      },
    });
    expect(
      (await run(['install', '--uninstall'], { GEMINI_CLI_HOME: path.join(home, 'alt') })).code,
    ).toBe(0);
    expect(
      readdirSync(path.join(home, 'alt', '.gemini')).filter((f) => !f.includes('backup')),
    ).toEqual([]);
  });

  it('reads the URL and token from ROTSCOPE_URL and ROTSCOPE_TOKEN', async () => {
    await run(['install'], { ROTSCOPE_URL: 'https://rot.example.com', ROTSCOPE_TOKEN: TOKEN });
    expect((read().telemetry as Record<string, unknown>).otlpEndpoint).toBe(
      'https://rot.example.com',
    );
    expect(readFileSync(path.join(dir(), '.env'), 'utf8')).toContain(TOKEN);
  });

  it('refuses a settings.json that is not JSON, and bad usage', async () => {
    mkdirSync(dir());
    writeFileSync(settingsFile(), '{ "ui": { // a comment\n } }');
    const bad = await run(['install']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not valid settings JSON');
    expect(readFileSync(settingsFile(), 'utf8')).toBe('{ "ui": { // a comment\n } }');
    expect((await run([])).code).toBe(2);
    expect((await run(['install', '--user', '--project'])).code).toBe(2);
    expect((await run(['install', '--url', 'ftp://x'])).code).toBe(2);
    expect((await run(['install', '--token', 'has space'])).code).toBe(2);
    expect((await run(['install', '--bogus'])).code).toBe(2);
  });

  it('--project writes .gemini/settings.json of the current directory (the real bin)', () => {
    const project = path.join(home, 'project');
    mkdirSync(project);
    expect(geminiSettingsDir('project', {}, project)).toBe(path.join(project, '.gemini'));
    const out = execFileSync(process.execPath, [BIN, 'gemini', 'install', '--project'], {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      },
      encoding: 'utf8',
    });
    expect(out).toContain(path.join(project, '.gemini', 'settings.json'));
    expect(readdirSync(home)).toEqual(['project']); // nothing in ~/.gemini
  });
});
