/**
 * The tool-result guard as Claude Code runs it (issue 25): bin/rotscope-guard.cjs (what
 * `rotscope claude-code install` writes) and `rotscope hook`, real child processes with hook JSON
 * on stdin (conventions §5.4), a real 2.1.332 transcript for the window, the guard's log, and a
 * loopback OTLP receiver for its spans. The real CLI's own scenarios are in
 * test/e2e/claude-code-real/guard.test.ts.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
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

/** The last main-thread input (input + cache tokens) and `tool`'s held result tokens of a transcript. */
function transcriptFacts(file: string, tool: string): { input: number; held: number } {
  let input = 0;
  const names = new Map<string, string>();
  let held = 0;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as {
      type?: string;
      message?: { usage?: Record<string, number>; content?: unknown };
    };
    const usage = entry.message?.usage;
    if (entry.type === 'assistant' && usage)
      input =
        (usage.input_tokens ?? 0) +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0);
    if (!Array.isArray(entry.message?.content)) continue;
    for (const block of entry.message.content as Array<Record<string, unknown>>) {
      if (block.type === 'tool_use') names.set(String(block.id), String(block.name));
      if (block.type === 'tool_result' && names.get(String(block.tool_use_id)) === tool)
        // each result estimated on its own, 4 bytes a token
        held += Math.ceil(
          Buffer.byteLength(
            typeof block.content === 'string'
              ? block.content
              : (block.content as Array<{ text: string }>).map((b) => b.text).join(''),
          ) / 4,
        );
    }
  }
  return { input, held };
}
/** An assistant line asking for `tool`, its call's input `input` tokens. */
const toolUse = (id: string, tool: string, input: number) =>
  JSON.stringify({
    type: 'assistant',
    isSidechain: false,
    message: {
      id: `msg-${id}`,
      model: 'claude-sonnet-4-6',
      content: [{ type: 'tool_use', id, name: tool, input: {} }],
      usage: { input_tokens: 8, cache_read_input_tokens: input - 8, output_tokens: 40 },
    },
  });
/** A user line with the result of tool call `id`. */
const toolResult = (id: string, text: string) =>
  JSON.stringify({
    type: 'user',
    isSidechain: false,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] },
  });

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
  it("narrows a whole-file Read to what keeps Read's held results under the detector's share, and tells the model and the user", async () => {
    const env = home('narrow');
    const file = path.join(work, 'big.log');
    const result = await runGuard(preRead({ file_path: file }), env);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as {
      systemMessage: string;
      hookSpecificOutput: { updatedInput: Record<string, unknown>; additionalContext: string };
    };
    // The detector's rule on the real transcript: Read's results held, against 90% of the 30%
    // share of the last call's input.
    const { input, held } = transcriptFacts(TRANSCRIPT, 'Read');
    const budget = Math.floor((0.27 * input - held) / 0.73);
    expect(budget).toBeGreaterThan(5_000);
    // each line of big.log is 93 bytes, 100 with the number Claude Code puts before it
    const { limit, ...rest } = answer.hookSpecificOutput.updatedInput as { limit: number };
    expect(rest).toEqual({ file_path: file, offset: 1 });
    expect(limit).toBe(Math.floor((budget * 4) / 100));
    expect(answer.hookSpecificOutput.additionalContext).toMatch(
      new RegExp(
        `^rotscope guard: big\\.log is [\\d,]+ KB \\(about [\\d,]+ tokens\\), over the budget of ${budget.toLocaleString('en-US')} tokens for one tool result \\(Read results hold 0% of the 24k-token input; rotscope reports a tool over 30%\\), so only lines 1-${limit} were read\\. Read the rest in parts with offset and limit \\(next: offset ${limit + 1}\\)`,
      ),
    );
    // the user's one line in Claude Code
    expect(answer.systemMessage).toMatch(
      new RegExp(
        `^rotscope guard: read lines 1-${limit} of big\\.log \\(about [\\d,]+ tokens kept out; Read results at 27% of the context\\)$`,
      ),
    );
    const log = readFileSync(logOf(env), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}narrowed {2}Read {2}tokens=[\\d,]+ {2}budget=${budget.toLocaleString('en-US')} {2}kept_out=[\\d,]+ {2}session=sess-guard {2}.*big\\.log lines 1-${limit}$`,
      ),
    );
  });

  it('counts every result of the tool still held (not each alone), and a compaction empties them', async () => {
    const env = home('held');
    // 40 KB of Read results held in a 30k-token input: over 27% already, so one line is read
    const transcript = path.join(dir, 'held.jsonl');
    const readResult = lines(440, 'src');
    writeFileSync(
      transcript,
      [
        toolUse('t1', 'Read', 30_000),
        toolResult('t1', readResult),
        toolUse('t2', 'Bash', 30_000),
        toolResult('t2', 'ok'),
        toolUse('t3', 'Read', 30_000),
      ].join('\n') + '\n',
    );
    const small = path.join(work, 'medium.txt');
    writeFileSync(small, lines(60)); // 5.6 KB: far under any share of a window alone
    const narrowed = await runGuard(
      { ...preRead({ file_path: small }), transcript_path: transcript },
      env,
    );
    const answer = JSON.parse(narrowed.stdout) as {
      systemMessage: string;
      hookSpecificOutput: { updatedInput: { limit: number }; additionalContext: string };
    };
    expect(answer.hookSpecificOutput.updatedInput.limit).toBe(1);
    expect(answer.hookSpecificOutput.additionalContext).toContain(
      'over the budget of 0 tokens for one tool result (Read results hold 34% of the 30k-token input; rotscope reports a tool over 30%), so only line 1 was read',
    );
    expect(answer.systemMessage).toMatch(/^rotscope guard: read line 1 of medium\.txt /);
    // After a compaction the context holds none of them: the same Read passes whole.
    writeFileSync(
      transcript,
      readFileSync(transcript, 'utf8') +
        [
          JSON.stringify({ type: 'system', subtype: 'compact_boundary', isSidechain: false }),
          toolUse('t4', 'Read', 30_000),
        ].join('\n') +
        '\n',
    );
    const after = await runGuard(
      { ...preRead({ file_path: small }), transcript_path: transcript },
      env,
    );
    expect(after).toMatchObject({ code: 0, stdout: '' });
    // A Bash result that would bring Bash's results over the share is warned about, to both:
    // the room is (0.27 × 30,000 − 0) / 0.73 = 11,095 tokens; 4,650 pass, 13,950 do not.
    const bashAfter = (text: string) =>
      runGuard(
        {
          ...postTool('Bash', { stdout: text, stderr: '' }),
          transcript_path: transcript,
          tool_use_id: 't5',
        },
        env,
      );
    expect(await bashAfter(lines(200))).toMatchObject({ code: 0, stdout: '' });
    const warned = JSON.parse((await bashAfter(lines(600))).stdout) as {
      systemMessage: string;
      hookSpecificOutput: { additionalContext: string };
    };
    expect(warned.systemMessage).toBe(
      'rotscope guard: a Bash result of about 13,950 tokens brings Bash results to 32% of the context; the model was told',
    );
    expect(warned.hookSpecificOutput.additionalContext).toContain(
      'over the budget of 11,095 tokens for one tool result (Bash results hold 0% of the 30k-token input',
    );
    expect(readFileSync(logOf(env), 'utf8').match(/ {2}(narrowed|warned) {2}/g)).toHaveLength(2);
  });

  it('counts a result it saw that the transcript does not hold yet (Claude Code writes it behind)', async () => {
    const env = home('lag');
    // what earlier sessions left: one untouched for two days, one from an hour ago
    const seenDir = path.join(env.HOME!, '.rotscope', 'guard-seen');
    mkdirSync(seenDir, { recursive: true });
    const stale = path.join(seenDir, 'sess-old.json');
    const recent = path.join(seenDir, 'sess-recent.json');
    writeFileSync(stale, '[]');
    writeFileSync(recent, '[]');
    const ago = (ms: number) => new Date(Date.now() - ms);
    utimesSync(stale, ago(2 * 86_400_000), ago(2 * 86_400_000));
    utimesSync(recent, ago(3_600_000), ago(3_600_000));
    const { input, held } = transcriptFacts(TRANSCRIPT, 'Read');
    // a Read's result after it ran (within budget: passes, but the guard keeps it)
    const result = lines(60);
    const after = await runGuard(
      {
        ...postTool('Read', { type: 'text', file: { content: result } }),
        tool_name: 'Read',
        tool_use_id: 'toolu_lagging',
      },
      env,
    );
    expect(after).toMatchObject({ code: 0, stdout: '' });
    // the new session's file was written, and the one untouched for a day removed
    expect(existsSync(path.join(seenDir, 'sess-guard.json'))).toBe(true);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    // the next Read, with the transcript still without that result: it is counted all the same
    const seenTokens = Math.ceil(Buffer.byteLength(result) / 4);
    const budget = Math.floor((0.27 * input - held - seenTokens) / 0.73);
    const next = await runGuard(preRead({ file_path: path.join(work, 'big.log') }), env);
    const answer = JSON.parse(next.stdout) as { hookSpecificOutput: { additionalContext: string } };
    expect(answer.hookSpecificOutput.additionalContext).toContain(
      `over the budget of ${budget.toLocaleString('en-US')} tokens for one tool result (Read results hold ${Math.round(((held + seenTokens) / input) * 100)}% of the 24k-token input`,
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
    });
    expect(Number(attrs['rotscope.guard.budget_tokens'])).toBeGreaterThan(5_000);
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
