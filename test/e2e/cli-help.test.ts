/**
 * `--help` on every command and subcommand of the real `rotscope` (bin/rotscope.js in a child
 * process): the command's usage on stdout, exit 0, nothing on stderr, and nothing else done
 * (no server started, no stdin read, no data directory written). Once six of them printed
 * Node's "Unknown option '--help'" and exited 2, `statusline --help` printed an empty line and
 * `hook --help` nothing.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dataDir = join(mkdtempSync(join(tmpdir(), 'rotscope-help-')), 'data');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const COMMANDS: Array<[string[], string]> = [
  [['serve'], 'rotscope serve'],
  [['migrate'], 'rotscope migrate'],
  [['token', 'create'], 'rotscope token create'],
  [['token', 'list'], 'rotscope token list'],
  [['token', 'revoke'], 'rotscope token revoke'],
  [['token'], 'rotscope token create'],
  [['secrets', 'status'], 'rotscope secrets'],
  [['secrets', 'seal'], 'rotscope secrets'],
  [['secrets', 'rotate'], 'rotscope secrets'],
  [['statusline'], 'rotscope statusline'],
  [['hook'], 'rotscope hook'],
  [['claude-code', 'install'], 'rotscope claude-code install'],
  [['claude-code'], 'rotscope claude-code install'],
  [['gemini', 'install'], 'rotscope gemini install'],
  [['gemini'], 'rotscope gemini install'],
  [['qwen', 'install'], 'rotscope qwen install'],
  [['qwen'], 'rotscope qwen install'],
  [['codex', 'install'], 'rotscope codex install'],
  [['codex'], 'rotscope codex install'],
  [['analyze'], 'rotscope analyze'],
  [['import'], 'rotscope import'],
];

describe('rotscope COMMAND --help', () => {
  it.each(COMMANDS)('%j', async (args, usage) => {
    for (const flag of ['--help', '-h']) {
      // a status JSON on stdin must not be read as the command's input
      const r = await runCli([...args, flag], {
        stdin: '{"session_id":"s"}',
        env: { ROTSCOPE_DATA_DIR: dataDir, ROTSCOPE_PORT: '1' },
        timeoutMs: 30_000,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(usage);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('the settings are listed for commands that read them', async () => {
    const r = await runCli(['serve', '--help']);
    expect(r.stdout).toContain('--data-dir');
    expect(r.stdout).toContain('ROTSCOPE_DATA_DIR');
  });

  it('rotscope --help lists every command and how to get help on one', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const [args, usage] of COMMANDS) expect(r.stdout, args.join(' ')).toContain(usage);
    expect(r.stdout).toContain('rotscope COMMAND --help');
  });
});

/** A user's own HOME and folder: help writes nothing into either. */
const userDir = mkdtempSync(join(tmpdir(), 'rotscope-help-user-'));
afterAll(() => rmSync(userDir, { recursive: true, force: true }));

describe('help that says enough, flags that say what was meant (issue 36 §5)', () => {
  it('claude-code install --help prints the full usage and writes nothing', async () => {
    const home = join(userDir, 'home');
    const work = join(userDir, 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const r = await runCli(['claude-code', 'install', '--help'], {
      cwd: work,
      env: { HOME: home, CLAUDE_CONFIG_DIR: '' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').length).toBeGreaterThan(10);
    for (const flag of ['--no-guard', '--uninstall', '--dry-run', '--keep-exporter', '--token'])
      expect(r.stdout).toMatch(new RegExp(`^\\s+${flag}\\b`, 'm')); // each explained on its own line
    expect(readdirSync(home)).toEqual([]);
    expect(readdirSync(work)).toEqual([]);
  });

  it.each([['migrate'], ['secrets'], ['secrets', 'status'], ['import'], ['token', 'list']])(
    '%s --help lists the store settings, not the server flags',
    async (...args) => {
      const r = await runCli([...args, '--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('--data-dir');
      expect(r.stdout).toContain('--database-url');
      for (const serverFlag of ['--port', '--host', '--max-body-bytes', '--evaluator-poll-ms'])
        expect(r.stdout).not.toContain(serverFlag);
    },
  );

  it.each([
    [['serve', '--prot', '1'], '--prot', '--port'],
    [['migrate', '--data-dri', 'x'], '--data-dri', '--data-dir'],
    [['import', 'f', '--worksapce', 'w'], '--worksapce', '--workspace'],
    [['claude-code', 'install', '--dry-rn'], '--dry-rn', '--dry-run'],
    [['codex', 'install', '--keep-exportr'], '--keep-exportr', '--keep-exporter'],
  ])('%j: a wrong flag gets "did you mean"', async (args, wrong, meant) => {
    const r = await runCli(args, { env: { ROTSCOPE_DATA_DIR: dataDir } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`unknown flag ${wrong}; did you mean ${meant}?`);
    expect(r.stderr).not.toContain('Unknown option'); // not Node's raw parser message
    expect(r.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a flag far from any known one is named without a guess', async () => {
    const r = await runCli(['serve', '--zzzzzz'], { env: { ROTSCOPE_DATA_DIR: dataDir } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('rotscope serve: unknown flag --zzzzzz\n');
    expect(r.stderr).toContain('rotscope serve --help');
  });
});
