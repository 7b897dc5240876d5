/**
 * Server logs a person can read on a terminal (issue 36 §5): `rotscope serve` (the real
 * bin/rotscope.js) on a real pseudo-terminal (util-linux `script`) writes one readable line per
 * record (`12:04:05 INFO  rotscope listening on http://…  address=…`), while with stdout a pipe
 * (a log collector, systemd, docker) it stays one JSON object per line, and
 * `ROTSCOPE_LOG_FORMAT=json` keeps JSON on a terminal too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChildServer } from '../helpers/child-server.ts';
import { BIN } from '../helpers/cli.ts';
import { seedDataDir } from '../helpers/data-dir.ts';

const root = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-logs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const hasScript = spawnSync('script', ['--version']).status === 0;

/** `rotscope serve` on a pseudo-terminal; resolves with what it printed up to listening, then stops it. */
async function serveOnTerminal(env: Record<string, string>): Promise<string> {
  const dataDir = path.join(root, `data-${Math.random().toString(36).slice(2)}`);
  seedDataDir({ ROTSCOPE_DATA_DIR: dataDir });
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  // the shell prints the server's pid, so the test stops exactly the process it started
  const command = `${quote(process.execPath)} ${quote(BIN)} serve --port 0 & echo "PID=$!"; wait`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, DATABASE_URL: '', ROTSCOPE_DATA_DIR: dataDir, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line in 60 s:\n${output}`)),
      60_000,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/rotscope listening on/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const pid = Number(/PID=(\d+)/.exec(output)?.[1]);
  process.kill(pid, 'SIGTERM');
  await exited;
  return output.replace(/\r/g, '');
}

describe('server logs', { timeout: 120_000 }, () => {
  it.skipIf(!hasScript)('are readable lines on a terminal', async () => {
    const out = await serveOnTerminal({});
    expect(out).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}rotscope listening on http:\/\/127\.0\.0\.1:\d+ {2}address=http:\/\/127\.0\.0\.1:\d+ database=\w+/m,
    );
    expect(out).not.toMatch(/^\{"level"/m);
  });

  it.skipIf(!hasScript)('stay JSON on a terminal with ROTSCOPE_LOG_FORMAT=json', async () => {
    const out = await serveOnTerminal({ ROTSCOPE_LOG_FORMAT: 'json' });
    const line = out.split('\n').find((l) => l.includes('rotscope listening on'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 30,
      msg: expect.stringMatching(/^rotscope listening on/),
    });
  });

  it('are JSON when stdout is not a terminal', async () => {
    const server = await startChildServer({ ROTSCOPE_DATA_DIR: path.join(root, 'piped') });
    server.process.kill('SIGTERM');
    await server.exited;
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('rotscope listening on'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 30, address: server.url });
  });
});
