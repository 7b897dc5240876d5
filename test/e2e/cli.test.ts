/**
 * Every `rotscope` command as a user runs it: the real bin/rotscope.js in a child process, with
 * real stdin, arguments, environment and exit code. (test/integration/cli.test.ts calls run()
 * in-process; this file is the program.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { findToken } from '../../src/store/workspaces.ts';
import { BIN, runCli, type CliResult } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/store.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
const CJS_BIN = fileURLToPath(new URL('../../bin/rotscope-statusline.cjs', import.meta.url));
const OTLP_JSON = fileURLToPath(
  new URL('../fixtures/real/otlp-json_openinference_openai.json', import.meta.url),
);

let dataDir: string;
/** The store the commands use: a fresh PostgreSQL database when DATABASE_URL is set, else PGlite. */
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-cli-'));
  const url = await createTestDatabase();
  env = url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir };
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A stack trace or an internal error is never what a user sees. */
function expectNoTrace(result: CliResult): void {
  expect(result.stderr).not.toMatch(/\n\s+at |Error:|TypeError|node:internal/);
}

/** Claude Code's status line JSON (conventions §5.4), as it pipes it after an assistant message. */
function claudeCodeStatus(overrides: Record<string, unknown>): string {
  return JSON.stringify({
    hook_event_name: 'Status',
    session_id: 'fe5e1c67-53e7-4862-81ae-d0e013e3270b',
    transcript_path: '/nonexistent/transcript.jsonl',
    cwd: '/home/user/project',
    version: '2.1.197',
    model: { id: 'claude-opus-4-6', display_name: 'Opus 4.6' },
    workspace: { current_dir: '/home/user/project', project_dir: '/home/user/project' },
    output_style: { name: 'default' },
    cost: {
      total_cost_usd: 0.42,
      total_duration_ms: 61_000,
      total_api_duration_ms: 23_000,
      total_lines_added: 12,
      total_lines_removed: 3,
    },
    exceeds_200k_tokens: false,
    context_window: {
      total_input_tokens: 152_003,
      total_output_tokens: 4_100,
      context_window_size: 200_000,
      used_percentage: 76,
      remaining_percentage: 24,
      current_usage: {
        input_tokens: 3,
        output_tokens: 410,
        cache_creation_input_tokens: 2_000,
        cache_read_input_tokens: 150_000,
      },
    },
    ...overrides,
  });
}

// Each command is a fresh node process loading TypeScript through tsx, several open PGlite:
// seconds each on a busy 2-core machine.
describe('rotscope (the program)', { timeout: 240_000 }, () => {
  it('--help prints the usage and exits 0; no command prints it and exits 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage:');
    expect(help.stdout).toContain('rotscope statusline');
    expect(help.stdout).toContain('ROTSCOPE_DATA_DIR');
    const none = await runCli([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('Usage:');
  });

  it('an unknown command or a bad flag exits 2 with a message, never a stack trace', async () => {
    const cases: Array<[string[], string]> = [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['migrate', '--no-such-flag'], 'rotscope migrate: unknown flag --no-such-flag'],
      [['token', 'create', '--workspace'], 'rotscope token create: --workspace needs a value'],
      [['migrate', '--port', 'seventy'], 'ROTSCOPE_PORT (--port)'],
      [['token', 'create', '--workspace', 'x', '--scope', 'root'], 'usage: rotscope token create'],
      [['token', 'delete'], 'usage: rotscope token create'],
      [
        ['analyze', '--fail-on', 'never', TRANSCRIPT],
        '--fail-on must be info, warning or critical',
      ],
      [['import'], 'usage: rotscope import'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, { env })));
    results.forEach((result, i) => {
      const [args, message] = cases[i]!;
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain(message);
      expectNoTrace(result);
    });
  });

  describe('statusline', () => {
    it("reads Claude Code's status JSON from stdin while the transcript has no usage yet (amber from 70%)", async () => {
      const result = await runCli(['statusline'], {
        stdin: claudeCodeStatus({}),
        env: { NO_COLOR: '' },
      });
      expect(result).toEqual({ code: 0, stdout: '\x1b[33mctx 76% 152k/200k\x1b[0m\n', stderr: '' });
    });

    it('reads the real transcript at transcript_path first, with repo and branch from .git/HEAD', async () => {
      const repo = path.join(dataDir, 'myrepo');
      mkdirSync(path.join(repo, '.git'), { recursive: true });
      writeFileSync(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/wrap-up\n');
      const stdin = claudeCodeStatus({
        transcript_path: TRANSCRIPT,
        cwd: repo,
        workspace: { current_dir: repo, project_dir: repo },
        model: { id: 'claude-sonnet-4-20250514', display_name: 'Sonnet 4' },
      });
      // The status JSON says 152k; the transcript (durable state) says 21,552.
      const result = await runCli(['statusline'], { stdin, env: { NO_COLOR: '1' } });
      expect(result).toEqual({
        code: 0,
        stdout: 'myrepo wrap-up · ctx 10% 22k/200k\n',
        stderr: '',
      });
      // The entry `claude-code install` writes: the same line.
      const child = spawnSync(process.execPath, [CJS_BIN], {
        input: stdin,
        env: {
          ...process.env,
          ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
          NO_COLOR: '',
        },
        encoding: 'utf8',
      });
      expect({ code: child.status, stdout: child.stdout, stderr: child.stderr }).toEqual({
        code: 0,
        stdout: 'myrepo wrap-up · \x1b[2mctx 10% 22k/200k\x1b[0m\n',
        stderr: '',
      });
    });

    it('prints an empty line for unreadable stdin and "ctx –" when nothing tells the usage; exit 0, no trace', async () => {
      const cases: Array<[string | Buffer, string]> = [
        ['', '\n'],
        ['not json at all', '\n'],
        [Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0x80, 0x0a]), '\n'],
        ['[1,2,3]', '\n'],
        ['null', '\n'],
        ['{"context_window": {"current_usage": "lots"}, "transcript_path": 42}', 'ctx –\n'],
        ['{"transcript_path": "/dev/null"}', 'ctx –\n'],
      ];
      const results = await Promise.all(
        cases.map(([stdin]) => runCli(['statusline'], { stdin, env: { NO_COLOR: '1' } })),
      );
      results.forEach((result, i) =>
        expect(result).toEqual({ code: 0, stdout: cases[i]![1], stderr: '' }),
      );
    });

    // util-linux `script` runs the command on a pseudo-terminal; its own stdin stays open and
    // silent, so the command's stdin is a terminal nobody types on (a reader waiting for EOF hangs).
    const hasScript = spawnSync('script', ['--version']).status === 0;
    it.skipIf(!hasScript)('does not wait for input when stdin is a terminal', async () => {
      const child = spawn(
        'script',
        [
          '-qec',
          `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} statusline`,
          '/dev/null',
        ],
        {
          env: { ...process.env, ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1' },
          stdio: ['pipe', 'pipe', 'ignore'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await new Promise((resolve) =>
        child.on('exit', (exitCode, signal) => resolve(exitCode ?? signal)),
      );
      clearTimeout(timer);
      child.stdin.destroy();
      expect({ code, stdout: stdout.replace(/\r/g, '') }).toEqual({ code: 0, stdout: '\n' });
    });
  });

  it('migrate applies the migrations once, then reports the schema up to date', async () => {
    const first = await runCli(['migrate'], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^applied 0001_init, .* \(schema version \d+\)\n$/);
    const again = await runCli(['migrate'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^up to date \(schema version \d+\)\n$/);
  });

  it('token create prints the token once on stdout and stores it for its workspace', async () => {
    const admin = await runCli(['token', 'create', '--workspace', 'team-x', '--scope', 'admin'], {
      env,
    });
    expect(admin.code, admin.stderr).toBe(0);
    const result = await runCli(['token', 'create', '--workspace', 'team-x', '--scope', 'ingest'], {
      env,
    });
    expect(result.code).toBe(0);
    const token = result.stdout.trim();
    expect(token).toMatch(/^rs_ingest_[\w-]{32}$/);
    expect(result.stderr).toContain('shown once');
    const store = await openStore({ databaseUrl: env.DATABASE_URL, dataDir });
    try {
      expect(await findToken(store.db, token)).toEqual({ workspaceId: 'team-x', scope: 'ingest' });
    } finally {
      await store.close();
    }
  });

  it('import and analyze write one of a thing in the singular ("1 tool result", "1 conversation")', async () => {
    // Claude Code 2.1.332's sub-agent session: 3 calls and exactly one tool result in the main
    // transcript; the compaction session of 2.1.197: two compactions.
    const subagent = fileURLToPath(
      new URL('../fixtures/real/claude-code-2.1.332/subagent/transcript.jsonl', import.meta.url),
    );
    const imported = await runCli(['import', subagent, '--workspace', 'plural'], { env });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(
      `${subagent}: 3 calls, 1 tool result, 0 compactions in 1 conversation\n`,
    );
    const analyzed = await runCli(['analyze', subagent], { env });
    expect(analyzed.stdout).toContain(
      'conversation 26af7a4c-a90c-4fc6-a08f-cafee3bbedf7: 3 calls, 1 stream, 0 compactions',
    );
    for (const output of [imported.stdout, analyzed.stdout])
      expect(output).not.toMatch(
        /\b1 [a-z ]*?(calls|results|compactions|conversations|streams|findings)\b|\(s\)/,
      );
  });

  it('import stores a real transcript (re-import adds nothing); a missing file exits 1', async () => {
    const first = await runCli(['import', TRANSCRIPT, '--workspace', 'imported'], { env });
    expect(first.code).toBe(0);
    // the session is from September 2025: history, evaluated by the import, not pushed
    const retention =
      'note: 170 of the calls are older than the retention window (30 days, ' +
      "ROTSCOPE_RETENTION_DAYS): a server's retention removes them, with their tool results and " +
      'compactions, at its next run; their findings stay (ROTSCOPE_RETENTION_DAYS=0 keeps everything)\n';
    expect(first.stdout).toBe(
      `${TRANSCRIPT}: 170 calls, 167 tool results, 0 compactions in 1 conversation\n` +
        '2 findings from history, not sent\n' +
        retention,
    );
    const again = await runCli(['import', TRANSCRIPT, '--workspace', 'imported'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `${TRANSCRIPT}: 170 calls, 167 tool results, 0 compactions in 1 conversation\n` +
        '0 findings from history, not sent\n' +
        retention,
    );
    const store = await openStore({ databaseUrl: env.DATABASE_URL, dataDir });
    try {
      const calls = await store.db
        .selectFrom('llm_calls')
        .select('stream_key')
        .where('workspace_id', '=', 'imported')
        .execute();
      expect(calls).toHaveLength(170);
      // stored with their calls' time, and nothing queued for a channel
      const findings = await store.db
        .selectFrom('findings')
        .select('created_at')
        .where('workspace_id', '=', 'imported')
        .execute();
      expect(findings).toHaveLength(2);
      for (const f of findings)
        expect(new Date(f.created_at).toISOString()).toMatch(/^2025-09-03T0[01]:/);
      const deliveries = await store.db
        .selectFrom('deliveries')
        .select('id')
        .where('workspace_id', '=', 'imported')
        .execute();
      expect(deliveries).toEqual([]);
    } finally {
      await store.close();
    }
    const missing = await runCli(['import', '/nonexistent/session.jsonl'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/session.jsonl: cannot read (ENOENT)');
    expectNoTrace(missing);
    // a folder with nothing rotscope reads (here: only a compressed transcript) says so
    const folder = mkdtempSync(path.join(tmpdir(), 'rotscope-import-empty-'));
    writeFileSync(path.join(folder, 'session.jsonl.gz'), '');
    const empty = await runCli(['import', folder], { env });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain(`${folder}: a folder with no session files in it`);
    expectNoTrace(empty);
    rmSync(folder, { recursive: true, force: true });
  });

  it('analyze reports the findings of a real transcript; --fail-on sets the exit code', async () => {
    const [plain, json, failWarning, failCritical, otlp] = await Promise.all([
      runCli(['analyze', TRANSCRIPT]),
      runCli(['analyze', TRANSCRIPT, '--json']),
      runCli(['analyze', TRANSCRIPT, '--fail-on', 'warning']),
      runCli(['analyze', TRANSCRIPT, '--fail-on', 'critical']),
      runCli(['analyze', OTLP_JSON]),
    ]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(
      '1 conversation, 170 calls, 2 findings (0 critical, 2 warning, 0 info)',
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).totals).toEqual({
      conversations: 1,
      calls: 170,
      findings: { info: 0, warning: 2, critical: 0 },
    });
    expect(failWarning.code).toBe(1);
    expect(failCritical.code).toBe(0);
    expect(otlp.code).toBe(0);
    const missing = await runCli(['analyze', '/nonexistent/trace.json']);
    expect(missing.code).toBe(2);
    expectNoTrace(missing);
  });
});
