/**
 * `rotscope claude-code install` as a user runs it (the real bin/rotscope.js, child processes):
 * merged into an existing settings.json, a backup first, idempotent, --dry-run, --uninstall of
 * ours only, --project; and the plugin folder's hooks match what install writes.
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-install-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user's own settings: their hook and permissions must survive install and uninstall. */
const USER_SETTINGS = {
  permissions: { allow: ['Bash(npm test)'] },
  hooks: {
    PreCompact: [{ matcher: 'manual', hooks: [{ type: 'command', command: 'echo mine' }] }],
    Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }],
  },
};

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('rotscope claude-code install (the program)', { timeout: 240_000 }, () => {
  it('merges into $CLAUDE_CONFIG_DIR/settings.json with a backup, and is idempotent', async () => {
    const config = path.join(dir, 'user');
    mkdirSync(config);
    const file = path.join(config, 'settings.json');
    writeFileSync(file, JSON.stringify(USER_SETTINGS, null, 2));
    const env = { CLAUDE_CONFIG_DIR: config };

    const dry = await runCli(['claude-code', 'install', '--dry-run'], { env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${file}`);
    expect(dry.stdout).toMatch(/^\+ {3}"statusLine": \{$/m);
    expect(dry.stdout).toMatch(/^\+ .*rotscope\.js\\?" hook",?$/m);
    expect(read(file)).toEqual(USER_SETTINGS); // nothing written
    expect(readdirSync(config)).toEqual(['settings.json']);

    const first = await runCli(['claude-code', 'install'], { env });
    expect(first.code).toBe(0);
    const settings = read(file);
    expect(settings.permissions).toEqual(USER_SETTINGS.permissions);
    expect(settings.statusLine).toEqual({
      type: 'command',
      command: expect.stringMatching(/rotscope-statusline\.cjs"$/),
      padding: 0,
    });
    const hook = {
      type: 'command',
      command: expect.stringMatching(/rotscope\.js" hook$/),
      timeout: 10,
    };
    // The tool-result guard: its own fast CommonJS command, before a Read and after every tool.
    const guard = {
      type: 'command',
      command: expect.stringMatching(/rotscope-guard\.cjs"$/),
      timeout: 5,
    };
    expect(settings.hooks).toEqual({
      PreCompact: [USER_SETTINGS.hooks.PreCompact[0], { matcher: '', hooks: [hook] }],
      Stop: USER_SETTINGS.hooks.Stop,
      PostCompact: [{ matcher: '', hooks: [hook] }],
      SessionStart: [{ matcher: '', hooks: [hook] }],
      PreToolUse: [{ matcher: 'Read', hooks: [guard] }],
      PostToolUse: [{ matcher: '', hooks: [guard] }],
    });
    // The guard command written runs: a small result passes with nothing printed.
    const passed = execFileSync('sh', ['-c', settings.hooks.PostToolUse[0].hooks[0].command], {
      input: JSON.stringify({
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_response: { stdout: 'ok', stderr: '' },
      }),
      env: {
        ...process.env,
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        HOME: config,
      },
      encoding: 'utf8',
    });
    expect(passed).toBe('');
    const backups = readdirSync(config).filter((f) => f.includes('.rotscope-backup'));
    expect(backups).toEqual(['settings.json.rotscope-backup']);
    expect(read(path.join(config, backups[0]!))).toEqual(USER_SETTINGS);

    // The command written runs: Claude Code's status JSON in, the status line out.
    const line = execFileSync('sh', ['-c', settings.statusLine.command], {
      input: JSON.stringify({ context_window: { current_usage: { input_tokens: 50_000 } } }),
      env: {
        ...process.env,
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        NO_COLOR: '1',
      },
      encoding: 'utf8',
    });
    expect(line).toBe('ctx 25% 50k/200k\n');

    const again = await runCli(['claude-code', 'install'], { env });
    expect(again.stdout).toContain('already installed');
    expect(read(file)).toEqual(settings);
    expect(readdirSync(config).filter((f) => f.includes('backup'))).toHaveLength(1);

    const removed = await runCli(['claude-code', 'install', '--uninstall'], { env });
    expect(removed.code).toBe(0);
    expect(read(file)).toEqual(USER_SETTINGS);
    expect(readdirSync(config).filter((f) => f.endsWith('.rotscope-replaced.json'))).toEqual([]);
  });

  it('writes the telemetry settings and ROTSCOPE_URL, and says what to do next', async () => {
    const config = path.join(dir, 'telemetry');
    mkdirSync(config);
    const file = path.join(config, 'settings.json');
    const env = { CLAUDE_CONFIG_DIR: config, ROTSCOPE_URL: '', ROTSCOPE_TOKEN: '' };

    const open = await runCli(['claude-code', 'install'], { env });
    expect(open.code, open.stderr).toBe(0);
    expect(read(file).env).toEqual({
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      ROTSCOPE_URL: 'http://127.0.0.1:4318',
    });
    expect(open.stdout).toContain('telemetry (traces and log events to http://127.0.0.1:4318)');
    expect(open.stdout).toContain('restart Claude Code');
    expect(open.stdout).toContain('http://127.0.0.1:4318/#/findings');
    expect(open.stdout).toContain('run this again with --token');

    const token = 'rs_ingest_abcdefghijklmnopqrstuvwxyz012345';
    const locked = await runCli(
      ['claude-code', 'install', '--url', 'http://127.0.0.1:4999/', '--token', token],
      { env },
    );
    expect(locked.code, locked.stderr).toBe(0);
    // the token is not in settings.json: a private file beside it, read by the hooks and by
    // Claude Code's otelHeadersHelper
    const tokenFile = `${file}.rotscope-token`;
    const withToken = read(file);
    expect(JSON.stringify(withToken)).not.toContain(token);
    expect(withToken.env).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4999',
      ROTSCOPE_URL: 'http://127.0.0.1:4999',
      ROTSCOPE_TOKEN_FILE: tokenFile,
    });
    expect(withToken.env.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined();
    expect(withToken.env.ROTSCOPE_TOKEN).toBeUndefined();
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    const headers = execFileSync('sh', ['-c', withToken.otelHeadersHelper], { encoding: 'utf8' });
    expect(JSON.parse(headers)).toEqual({ Authorization: `Bearer ${token}` });
    expect(locked.stdout).toContain('with your token');

    const bad = await runCli(['claude-code', 'install', '--url', 'localhost:4318'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--url must be an http(s) URL');
  });

  it("warns before replacing the user's status line, keeps it on request, and uninstall puts everything back", async () => {
    const config = path.join(dir, 'own-status');
    mkdirSync(config);
    const file = path.join(config, 'settings.json');
    const own = {
      ...USER_SETTINGS,
      statusLine: { type: 'command', command: '~/bin/my-status.sh', padding: 1 },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318', MY_FLAG: 'on' },
    };
    writeFileSync(file, JSON.stringify(own, null, 2));
    const env = { CLAUDE_CONFIG_DIR: config, ROTSCOPE_URL: '', ROTSCOPE_TOKEN: '' };

    const dry = await runCli(['claude-code', 'install', '--dry-run'], { env });
    expect(dry.stdout).toContain('warning: this replaces your status line (~/bin/my-status.sh)');
    expect(dry.stdout).toContain('--keep-statusline');
    expect(read(file)).toEqual(own);

    const kept = await runCli(['claude-code', 'install', '--keep-statusline'], { env });
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).not.toContain('your status line');
    // their collector is named before it is replaced
    expect(kept.stdout).toContain(
      'warning: this replaces your exporter: OTEL_EXPORTER_OTLP_ENDPOINT=http://collector.internal:4318',
    );
    expect(kept.stdout).toContain('status line (yours, kept)');
    expect(read(file).statusLine).toEqual(own.statusLine);

    const replaced = await runCli(['claude-code', 'install'], { env });
    expect(replaced.stdout).toContain('warning: this replaces your status line');
    const installed = read(file);
    expect(installed.statusLine.command).toMatch(/rotscope-statusline\.cjs"$/);
    expect(installed.env).toMatchObject({
      MY_FLAG: 'on',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    });

    const removed = await runCli(['claude-code', 'install', '--uninstall'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('your status line restored');
    // exactly what was there: their status line, their endpoint, their own env, their hooks
    expect(read(file)).toEqual(own);
  });

  it('--project writes .claude/settings.json of the current directory, creating it', async () => {
    const project = path.join(dir, 'project');
    mkdirSync(project);
    // runCli has no working-directory option: the real bin, started in the project directory.
    const out = execFileSync(
      'sh',
      [
        '-c',
        `cd ${JSON.stringify(project)} && ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin/rotscope.js'))} claude-code install --project`,
      ],
      {
        env: { ...process.env, ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1' },
        encoding: 'utf8',
      },
    );
    expect(out).toContain(path.join(project, '.claude', 'settings.json'));
    expect(Object.keys(read(path.join(project, '.claude', 'settings.json')).hooks)).toEqual([
      'PreCompact',
      'PostCompact',
      'SessionStart',
      'PreToolUse',
      'PostToolUse',
    ]);
  });

  it('--no-guard leaves the tool-result guard out', async () => {
    const config = path.join(dir, 'no-guard');
    mkdirSync(config);
    const result = await runCli(['claude-code', 'install', '--no-guard'], {
      env: { CLAUDE_CONFIG_DIR: config, ROTSCOPE_URL: '', ROTSCOPE_TOKEN: '' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(Object.keys(read(path.join(config, 'settings.json')).hooks)).toEqual([
      'PreCompact',
      'PostCompact',
      'SessionStart',
    ]);
    expect(result.stdout).not.toContain('tool-result guard');
  });

  it('refuses settings.json that is not JSON and leaves it alone; bad usage exits 2', async () => {
    const config = path.join(dir, 'broken');
    mkdirSync(config);
    writeFileSync(path.join(config, 'settings.json'), '{ "hooks": ');
    const result = await runCli(['claude-code', 'install'], { env: { CLAUDE_CONFIG_DIR: config } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not valid settings JSON');
    expect(readFileSync(path.join(config, 'settings.json'), 'utf8')).toBe('{ "hooks": ');
    const usage = await runCli(['claude-code', 'install', '--user', '--project']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: rotscope claude-code install');
  });

  // The guard is install's only: it runs on every tool call, so it needs install's absolute,
  // fast command (bin/rotscope-guard.cjs), not `rotscope` looked up on PATH.
  it('the plugin folder declares the same compaction hooks as install', () => {
    const plugin = read(path.join(ROOT, 'claude-code-plugin/.claude-plugin/plugin.json'));
    expect(plugin.name).toBe('rotscope');
    const hooks = read(path.join(ROOT, 'claude-code-plugin', plugin.hooks)).hooks;
    expect(
      Object.entries(hooks).map(([event, groups]) => [
        event,
        (groups as Array<{ matcher: string; hooks: Array<{ command: string }> }>).map((g) => [
          g.matcher,
          g.hooks.map((h) => h.command),
        ]),
      ]),
    ).toEqual([
      ['PreCompact', [['', ['rotscope hook']]]],
      ['PostCompact', [['', ['rotscope hook']]]],
      ['SessionStart', [['', ['rotscope hook']]]],
    ]);
  });
});
