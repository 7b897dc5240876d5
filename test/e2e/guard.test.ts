/**
 * The tool-result guard as Claude Code runs it (issue 25): bin/rotscope-guard.cjs (what
 * `rotscope claude-code install` writes) and `rotscope hook`, real child processes with hook JSON
 * on stdin (conventions §5.4), a real 2.1.332 transcript for the window, the guard's log, and a
 * loopback OTLP receiver for its spans. The real CLI's own scenarios are in
 * test/e2e/claude-code-real/guard.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';

const GUARD = fileURLToPath(new URL('../../bin/rotscope-guard.cjs', import.meta.url));
const TRANSCRIPT = fileURLToPath(
  new URL('../fixtures/real/claude-code-2.1.332/reread/transcript.jsonl', import.meta.url),
);

/** The guard as Claude Code runs it: hook JSON on stdin, no server unless the case sets one. */
const runGuard = (input: unknown, env: Record<string, string>) =>
  runCli([], {
    bin: GUARD,
    stdin: typeof input === 'string' ? input : JSON.stringify(input),
    env: { ROTSCOPE_URL: '', ...env },
  });

let dir: string;
let work: string;
let receiver: HttpReceiver;
const lines = (n: number, label = 'line') =>
  Array.from(
    { length: n },
    (_, i) => `${label} ${String(i).padStart(6, '0')} ${'x'.repeat(80)}`,
  ).join('\n');

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-guard-'));
  work = path.join(dir, 'work');
  mkdirSync(work);
  writeFileSync(path.join(work, 'big.log'), lines(4_000)); // ~360 KB, ~90k tokens
  writeFileSync(path.join(work, 'small.txt'), lines(10));
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh HOME per case: its own guard log and config. */
function home(name: string, config?: object): Record<string, string> {
  const h = path.join(dir, name);
  mkdirSync(path.join(h, '.rotscope'), { recursive: true });
  if (config) writeFileSync(path.join(h, '.rotscope', 'guard.json'), JSON.stringify(config));
  return { HOME: h };
}
const logOf = (env: Record<string, string>) => path.join(env.HOME!, '.rotscope', 'guard.log');

const preRead = (input: object) => ({
  session_id: 'sess-guard',
  transcript_path: TRANSCRIPT,
  cwd: work,
  hook_event_name: 'PreToolUse',
  tool_name: 'Read',
  tool_input: input,
  tool_use_id: 'toolu_1',
});
const postTool = (tool: string, response: object) => ({
  session_id: 'sess-guard',
  transcript_path: TRANSCRIPT,
  cwd: work,
  hook_event_name: 'PostToolUse',
  tool_name: tool,
  tool_input: {},
  tool_response: response,
  tool_use_id: 'toolu_2',
});

describe('bin/rotscope-guard.cjs', () => {
  it('narrows a whole-file Read over the budget to the lines that fit, and says how to read the rest', async () => {
    const env = home('narrow');
    const file = path.join(work, 'big.log');
    const result = await runGuard(preRead({ file_path: file }), env);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as {
      hookSpecificOutput: { updatedInput: Record<string, unknown>; additionalContext: string };
    };
    // The window of the transcript's model (200k) at the detector's 30%: 60,000 tokens, 240,000 bytes.
    const fit = readFileSync(file, 'utf8').slice(0, 240_000).split('\n').length - 1;
    // counted in the file's first 32 KB and extrapolated: within 1% of the exact count
    const { limit, ...rest } = answer.hookSpecificOutput.updatedInput as { limit: number };
    expect(rest).toEqual({ file_path: file, offset: 1 });
    expect(Math.abs(limit - fit)).toBeLessThanOrEqual(Math.ceil(fit / 100));
    expect(answer.hookSpecificOutput.additionalContext).toMatch(
      /^rotscope guard: big\.log is [\d,]+ KB \(about [\d,]+ tokens\), over the budget of 60,000 tokens for one tool result \(30% of the 200k window\), so only lines 1-\d+ were read\. Read the rest in parts with offset and limit \(next: offset \d+\)/,
    );
    const log = readFileSync(logOf(env), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}narrowed {2}Read {2}tokens=[\d,]+ {2}budget=60,000 {2}kept_out=[\d,]+ {2}session=sess-guard {2}.*big\.log lines 1-\d+$/,
    );
  });

  it('passes small results, ranged Reads and other tools untouched, and writes nothing', async () => {
    const env = home('quiet');
    const cases = [
      preRead({ file_path: path.join(work, 'small.txt') }),
      preRead({ file_path: path.join(work, 'big.log'), offset: 1, limit: 100 }),
      preRead({ file_path: path.join(work, 'missing.txt') }),
      { ...preRead({ command: 'cat big.log' }), tool_name: 'Bash' },
      postTool('Bash', { stdout: 'ok\n', stderr: '' }),
      postTool('Read', { type: 'text', file: { content: lines(10) } }),
    ];
    for (const input of cases) {
      const result = await runGuard(input, env);
      expect({ input, code: result.code, stdout: result.stdout }).toEqual({
        input,
        code: 0,
        stdout: '',
      });
    }
    expect(existsSync(logOf(env))).toBe(false);
  });

  it('tells the model when a result is over its budget, and never changes the result', async () => {
    const env = home('warn', { budgets: { Bash: 1_000 } });
    const result = await runGuard(postTool('Bash', { stdout: lines(100), stderr: '' }), env);
    const answer = JSON.parse(result.stdout) as { hookSpecificOutput: Record<string, unknown> };
    expect(Object.keys(answer.hookSpecificOutput).sort()).toEqual([
      'additionalContext',
      'hookEventName',
    ]);
    expect(answer.hookSpecificOutput.additionalContext).toMatch(
      /^rotscope guard: this Bash result is about [\d,]+ tokens, over the budget of 1,000 tokens for one tool result \(the guard's budget for Bash\); it stays in the context until a compaction\. Next time write output this large to a file/,
    );
    expect(readFileSync(logOf(env), 'utf8')).toMatch(
      / {2}warned {2}Bash {2}tokens=[\d,]+ {2}budget=1,000 {2}kept_out=0 {2}session=sess-guard\n$/,
    );
  });

  it('takes per-tool budgets and an off switch from its config', async () => {
    const narrow = home('tight', { budgets: { Read: 100 } });
    const small = await runGuard(preRead({ file_path: path.join(work, 'small.txt') }), narrow);
    expect(JSON.parse(small.stdout).hookSpecificOutput.updatedInput.limit).toBeGreaterThan(0);
    const off = home('off', { enabled: false });
    expect((await runGuard(preRead({ file_path: path.join(work, 'big.log') }), off)).stdout).toBe(
      '',
    );
    expect(existsSync(logOf(off))).toBe(false);
  });

  it('lets the call through on any error: bad stdin, a broken config; exit 0, logged', async () => {
    const env = home('errors');
    for (const input of ['', 'not json', '[1,2]']) {
      const result = await runGuard(input, env);
      expect({ input, code: result.code, stdout: result.stdout }).toEqual({
        input,
        code: 0,
        stdout: '',
      });
    }
    const broken = home('broken');
    writeFileSync(path.join(broken.HOME!, '.rotscope', 'guard.json'), '{ nope');
    const result = await runGuard(preRead({ file_path: path.join(work, 'big.log') }), broken);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(logOf(broken), 'utf8')).toMatch(/ {2}error {2}/);
  });

  it('sends each decision as a span when a server is configured', async () => {
    const env = { ...home('span'), ROTSCOPE_URL: receiver.url, ROTSCOPE_TOKEN: 'rs_ingest_test' };
    const before = receiver.requests.length;
    await runGuard(preRead({ file_path: path.join(work, 'big.log') }), env);
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    expect(request!.path).toBe('/v1/traces');
    expect(request!.headers.authorization).toBe('Bearer rs_ingest_test');
    const span = JSON.parse(request!.body).resourceSpans[0].scopeSpans[0].spans[0];
    expect(span.name).toBe('rotscope.guard');
    const attrs = Object.fromEntries(
      span.attributes.map((a: { key: string; value: Record<string, string> }) => [
        a.key,
        Object.values(a.value)[0],
      ]),
    );
    expect(attrs).toMatchObject({
      'session.id': 'sess-guard',
      'rotscope.guard.action': 'narrowed',
      'rotscope.guard.tool': 'Read',
      'rotscope.guard.budget_tokens': '60000',
    });
    expect(Number(attrs['rotscope.guard.kept_out_tokens'])).toBeGreaterThan(20_000);
  });
});

describe('rotscope hook', () => {
  it('hands PreToolUse and PostToolUse to the guard', async () => {
    const env = home('via-hook');
    const result = await runCli(['hook'], {
      stdin: JSON.stringify(preRead({ file_path: path.join(work, 'big.log') })),
      env: { ...env, ROTSCOPE_URL: '' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).hookSpecificOutput.updatedInput.offset).toBe(1);
    expect(readFileSync(logOf(env), 'utf8')).toContain('narrowed  Read');
  });
});
