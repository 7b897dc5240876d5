/**
 * `rotscope statusline --segment` (issue 37 §4): the context part alone, for ccstatusline's custom
 * command widget and the like, run as the real command with Claude Code's status JSON on stdin:
 * `bin/rotscope.js` (the compiled fast path when dist/ is current, and src/ through tsx) and
 * `bin/rotscope-statusline.cjs`, the command `claude-code install` writes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const FAST = fileURLToPath(new URL('../../bin/rotscope-statusline.cjs', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-segment-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A checkout named `alpha-svc` on branch `feature-x`, and a transcript whose last main-thread call
// sent 150,000 tokens (75% of a 200k window); a sub-agent's later, larger call does not count.
const repo = path.join(dir, 'alpha-svc');
mkdirSync(path.join(repo, '.git'), { recursive: true });
writeFileSync(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/feature-x\n');
const transcript = path.join(dir, 'transcript.jsonl');
const line = (id: string, sent: number, sidechain = false) =>
  JSON.stringify({
    type: 'assistant',
    isSidechain: sidechain,
    message: {
      id,
      model: 'claude-sonnet-4-6',
      usage: { input_tokens: 10, cache_read_input_tokens: sent - 10, output_tokens: 7 },
    },
  });
writeFileSync(
  transcript,
  [line('msg_1', 40_000), line('msg_2', 150_000), line('msg_3', 190_000, true)].join('\n') + '\n',
);
const status = JSON.stringify({
  session_id: 'segment-test',
  model: { id: 'claude-sonnet-4-6' },
  transcript_path: transcript,
  workspace: { current_dir: repo, project_dir: repo },
  context_window: { context_window_size: 200_000 },
});
const env = { NO_COLOR: '1', HOME: dir, ROTSCOPE_WINDOWS_DIR: path.join(dir, 'windows') };

const ways = [
  ['bin/rotscope.js, as the tests run it', {}],
  ['bin/rotscope.js from src/', { ROTSCOPE_FROM_SOURCE: '1' }],
] as const;

describe('rotscope statusline --segment', () => {
  for (const [name, extra] of ways) {
    it(`prints the context part alone (${name})`, async () => {
      const whole = await runCli(['statusline'], { stdin: status, env: { ...env, ...extra } });
      expect(whole).toMatchObject({ code: 0, stderr: '' });
      expect(whole.stdout).toBe('alpha-svc feature-x · ctx 75% 150k/200k\n');

      const segment = await runCli(['statusline', '--segment'], {
        stdin: status,
        env: { ...env, ...extra },
      });
      expect(segment).toMatchObject({ code: 0, stderr: '' });
      expect(segment.stdout).toBe('ctx 75% 150k/200k\n');
    });
  }

  it('prints it from the installed fast command too, coloured unless NO_COLOR', async () => {
    const plain = await runCli(['--segment'], { bin: FAST, stdin: status, env });
    expect(plain).toMatchObject({ code: 0, stdout: 'ctx 75% 150k/200k\n', stderr: '' });
    // 75% is amber under the default bands (70%..85%)
    const coloured = await runCli(['--segment'], {
      bin: FAST,
      stdin: status,
      env: { ...env, NO_COLOR: '' },
    });
    expect(coloured.stdout).toBe('\x1b[33mctx 75% 150k/200k\x1b[0m\n');
  });

  it('says so when nothing tells how full the context is', async () => {
    const empty = JSON.stringify({ workspace: { current_dir: repo } });
    const segment = await runCli(['statusline', '--segment'], { stdin: empty, env });
    expect(segment).toMatchObject({ code: 0, stdout: 'ctx –\n' });
  });

  it('refuses an argument it does not take, naming it (exit 2, an empty line)', async () => {
    for (const bin of [undefined, FAST]) {
      const args = bin ? ['--segmnet'] : ['statusline', '--segmnet'];
      const refused = await runCli(args, { stdin: status, env, ...(bin ? { bin } : {}) });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('\n');
      expect(refused.stderr).toContain('unknown argument "--segmnet"');
      expect(refused.stderr).toContain('--segment');
    }
  });
});
