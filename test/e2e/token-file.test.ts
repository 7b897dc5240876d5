/**
 * The hooks' token from its private file (issue 36 §2): `claude-code install --token` keeps the
 * token out of settings.json, in a 0600 file named by ROTSCOPE_TOKEN_FILE. The real
 * `rotscope hook` (SessionStart) and bin/rotscope-guard.cjs (a narrowed Read), in child
 * processes with no ROTSCOPE_TOKEN, send it from that file to a loopback receiver; the guard
 * hands it to the child that posts its span through the environment, not the command line
 * (which any user's `ps` shows).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
const TOKEN = 'rs_ingest_from_file_0123456789abcdef';

let dir: string;
let receiver: HttpReceiver;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-token-file-'));
  mkdirSync(path.join(dir, '.rotscope'));
  const tokenFile = path.join(dir, 'settings.json.rotscope-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  receiver = await startHttpReceiver();
  env = {
    HOME: dir,
    ROTSCOPE_URL: receiver.url,
    ROTSCOPE_TOKEN: '',
    ROTSCOPE_TOKEN_FILE: tokenFile,
  };
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the token from ROTSCOPE_TOKEN_FILE', () => {
  it('rotscope hook sends it with the session span', async () => {
    const before = receiver.requests.length;
    const r = await runCli(['hook'], {
      cwd: dir,
      env,
      stdin: JSON.stringify({
        session_id: 'sess-token-file',
        transcript_path: TRANSCRIPT,
        cwd: dir,
        hook_event_name: 'SessionStart',
        source: 'startup',
      }),
    });
    expect(r.code, r.stderr).toBe(0);
    // the agent knobs it fetches, then the session span: both with the token
    const requests = (await receiver.waitFor(before + 2)).slice(before);
    expect(requests.map((q) => q.path).sort()).toEqual(['/api/agent-knobs', '/v1/traces']);
    for (const q of requests) expect(q.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('the guard sends it with its decision', async () => {
    const big = path.join(dir, 'big.log');
    writeFileSync(
      big,
      Array.from({ length: 4_000 }, (_, i) => `line ${i} ${'x'.repeat(80)}`).join('\n'),
    );
    const before = receiver.requests.length;
    const r = await runCli([], {
      bin: GUARD,
      cwd: dir,
      env,
      stdin: JSON.stringify({
        session_id: 'sess-token-file',
        transcript_path: TRANSCRIPT,
        cwd: dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: big },
        tool_use_id: 'toolu_1',
      }),
    });
    expect(r.code, r.stderr).toBe(0);
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('no file, no token: the request goes without one (the server then says 401)', async () => {
    const before = receiver.requests.length;
    await runCli(['hook'], {
      cwd: dir,
      env: { ...env, ROTSCOPE_TOKEN_FILE: path.join(dir, 'missing') },
      stdin: JSON.stringify({
        session_id: 'sess-no-token',
        transcript_path: TRANSCRIPT,
        cwd: dir,
        hook_event_name: 'SessionStart',
        source: 'startup',
      }),
    });
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    expect(request!.headers.authorization).toBeUndefined();
  });
});
