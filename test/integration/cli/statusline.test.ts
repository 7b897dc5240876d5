/**
 * `rotscope statusline` (src/cli/statusline.ts): Claude Code's status JSON in, one line out,
 * derived from the transcript's tail (real 2.1.197 transcripts), always.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import * as statusline from '../../../src/cli/statusline.ts';

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../fixtures/real/${name}`, import.meta.url));
const SIDECHAINS = fixture('claude-code_transcript_sidechains.jsonl');
const COMPACTION = fixture('claude-code-2.1.197/compaction/transcript.jsonl');
const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-statusline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The line for a status JSON, without colour unless `env` says otherwise. */
function line(input: unknown, env: Record<string, string> = { NO_COLOR: '1' }): string {
  let out = '';
  const code = statusline.statuslineCommand(
    typeof input === 'string' ? input : JSON.stringify(input),
    { stdout: (t) => (out += t) },
    env,
  );
  expect(code).toBe(0);
  return out;
}

const assistant = (
  id: string,
  usage: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) =>
  JSON.stringify({
    type: 'assistant',
    isSidechain: false,
    message: { id, model: 'claude-sonnet-4-6', usage },
    ...extra,
  }) + '\n';
const sent = (tokens: number) => ({
  input_tokens: 8,
  cache_read_input_tokens: tokens - 8,
  output_tokens: 5,
});

function transcript(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('rotscope statusline', () => {
  it('reads the real transcript, not the status JSON, when the transcript has usage', () => {
    expect(statusline.lastUsage(SIDECHAINS)).toEqual({
      tokens: 21_552,
      model: 'claude-sonnet-4-20250514',
    });
    // The status JSON claims 152k: the transcript (durable state) wins.
    const status = {
      model: { id: 'claude-sonnet-4-20250514' },
      transcript_path: SIDECHAINS,
      context_window: { context_window_size: 200_000, current_usage: { input_tokens: 152_000 } },
    };
    expect(line(status)).toBe('ctx 10% 22k/200k\n');
  });

  it("uses the status JSON's context_window only while the transcript has no usage yet", () => {
    const status = {
      model: { id: 'claude-opus-4-6' },
      transcript_path: path.join(dir, 'not-written-yet.jsonl'),
      context_window: {
        context_window_size: 200_000,
        current_usage: {
          input_tokens: 3,
          cache_creation_input_tokens: 2_000,
          cache_read_input_tokens: 150_000,
        },
      },
    };
    expect(line(status)).toBe('ctx 76% 152k/200k\n');
  });

  it('stops at a compaction boundary: the real 2.1.197 session reads 14k after its first compaction, nothing after its second', () => {
    const lines = readFileSync(COMPACTION, 'utf8').split('\n');
    const afterFirst = transcript('after-first.jsonl', lines.slice(0, 23).join('\n') + '\n');
    expect(statusline.lastUsage(afterFirst)).toEqual({
      tokens: 14_000,
      model: 'claude-sonnet-4-6',
    });
    const beforeFirst = transcript('before-first.jsonl', lines.slice(0, 14).join('\n') + '\n');
    expect(line({ transcript_path: beforeFirst })).toBe('ctx 86% 172k/200k ⚠ wrap up\n');
    expect(statusline.lastUsage(COMPACTION)).toBeNull();
    expect(line({ transcript_path: COMPACTION, context_window: { current_usage: null } })).toBe(
      'ctx –\n',
    );
  });

  it('main thread only, one message read once, usage.iterations when top-level is zero, all-zero never a measurement', () => {
    const file = transcript(
      'mixed.jsonl',
      assistant('msg_a', sent(120_000)) +
        // the preserved tail re-writes a message: zero top-level usage, the real counts in iterations
        assistant('msg_b', {
          input_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
          output_tokens: 0,
          iterations: [
            { type: 'compaction', input_tokens: 170_000 },
            {
              type: 'message',
              input_tokens: 8,
              cache_read_input_tokens: 60_000,
              cache_creation_input_tokens: 992,
            },
          ],
        }) +
        assistant('msg_c', { input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 }) +
        assistant('msg_d', sent(190_000), { isSidechain: true }),
    );
    expect(statusline.lastUsage(file)).toEqual({ tokens: 61_000, model: 'claude-sonnet-4-6' });
  });

  it('finds a usage far back in a large file (bounded scan from the end)', () => {
    const file = transcript('big.jsonl', assistant('msg_a', sent(180_000)));
    appendFileSync(
      file,
      (JSON.stringify({ type: 'user', message: { content: 'é'.repeat(999) } }) + '\n').repeat(
        1_500,
      ),
    );
    expect(statusline.lastUsage(file)).toEqual({ tokens: 180_000, model: 'claude-sonnet-4-6' });
  });

  it('window: [1m] in the model id → 1M; above 200k → 1M; else 200k or ROTSCOPE_CONTEXT_WINDOW', () => {
    const file = transcript('w.jsonl', assistant('msg_a', sent(126_000)));
    expect(line({ model: { id: 'claude-opus-4-8[1m]' }, transcript_path: file })).toBe(
      'ctx 12% 126k/1M\n',
    );
    expect(line({ transcript_path: file })).toBe('ctx 63% 126k/200k\n');
    expect(
      line({ transcript_path: file }, { NO_COLOR: '1', ROTSCOPE_CONTEXT_WINDOW: '500000' }),
    ).toBe('ctx 25% 126k/500k\n');
    const big = transcript('w2.jsonl', assistant('msg_a', sent(413_000)));
    expect(line({ model: { id: 'claude-opus-4-8' }, transcript_path: big })).toBe(
      'ctx 41% 413k/1M\n',
    );
  });

  it('shows repo and branch from .git/HEAD (a branch, a detached head, a worktree file)', () => {
    const repo = path.join(dir, 'myrepo');
    mkdirSync(path.join(repo, '.git'), { recursive: true });
    mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
    writeFileSync(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/feature/x\n');
    expect(line({ cwd: path.join(repo, 'src', 'deep') })).toBe('myrepo feature/x · ctx –\n');
    writeFileSync(path.join(repo, '.git', 'HEAD'), '0123456789abcdef0123456789abcdef01234567\n');
    expect(line({ workspace: { current_dir: repo } })).toBe('myrepo 0123456 · ctx –\n');
    const worktree = path.join(dir, 'wt');
    mkdirSync(path.join(dir, 'gitdirs', 'wt'), { recursive: true });
    mkdirSync(worktree);
    writeFileSync(path.join(worktree, '.git'), `gitdir: ${path.join(dir, 'gitdirs', 'wt')}\n`);
    writeFileSync(path.join(dir, 'gitdirs', 'wt', 'HEAD'), 'ref: refs/heads/wt-branch\n');
    expect(line({ cwd: worktree })).toBe('wt wt-branch · ctx –\n');
  });

  it('three states in ANSI colour: dim below 60%, plain 60–70%, amber from 70%, red with ⚠ wrap up from 85%', () => {
    const at = (tokens: number) => ({
      transcript_path: transcript(`c${tokens}.jsonl`, assistant('m', sent(tokens))),
    });
    expect(line(at(50_000), {})).toBe('\x1b[2mctx 25% 50k/200k\x1b[0m\n');
    expect(line(at(130_000), {})).toBe('ctx 65% 130k/200k\n');
    expect(line(at(140_000), {})).toBe('\x1b[33mctx 70% 140k/200k\x1b[0m\n');
    expect(line(at(170_000), {})).toBe('\x1b[31mctx 85% 170k/200k ⚠ wrap up\x1b[0m\n');
    expect(line(at(170_000), { NO_COLOR: '1' })).toBe('ctx 85% 170k/200k ⚠ wrap up\n');
  });

  it('prints an empty line for input it cannot read, never a trace', () => {
    for (const bad of ['not json', '', '{"cwd": 42', '\u0000\u00ff']) expect(line(bad)).toBe('\n');
    const repo = path.join(dir, 'broken');
    mkdirSync(path.join(repo, '.git', 'HEAD'), { recursive: true }); // HEAD is a directory
    expect(line({ cwd: repo })).toBe('\n');
  });
});
