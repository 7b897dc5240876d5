/** The rotscope command in-process: migrate, token create, import (idempotent), bad usage. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/entry.ts';
import { openStore } from '../../src/store/db.ts';
import { findToken } from '../../src/store/workspaces.ts';
import { createTestDatabase } from '../helpers/store.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);

let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-cli-'));
  const url = await createTestDatabase();
  env = url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir };
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, env);
  return { code, stdout, stderr };
}

async function withStore<T>(
  fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>,
): Promise<T> {
  const store = await openStore({ databaseUrl: env.DATABASE_URL, dataDir });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('rotscope', () => {
  it('migrate applies the migrations once', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^applied 0001_init/);
    const second = await cli('migrate');
    expect(second.stdout).toMatch(/^up to date \(schema version \d+\)/);
  });

  it("a workspace's first token must be admin: a first read token is refused and says why", async () => {
    const refused = await cli('token', 'create', '--workspace', 'team-x', '--scope', 'read');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('workspace "team-x" has no admin token yet');
    expect(refused.stderr).toContain('rotscope token create --workspace team-x --scope admin');
    await withStore(async (store) => {
      expect(await store.db.selectFrom('api_tokens').select('id').execute()).toEqual([]);
    });
    expect((await cli('token', 'create', '--workspace', 'team-x', '--scope', 'admin')).code).toBe(
      0,
    );
  });

  it('token create prints a token once and stores only its hash', async () => {
    const result = await cli('token', 'create', '--workspace', 'team-x', '--scope', 'read');
    expect(result.code).toBe(0);
    const token = result.stdout.trim();
    expect(token).toMatch(/^rs_read_[\w-]{32}$/);
    expect(result.stderr).toContain('shown once');
    await withStore(async (store) => {
      expect(await findToken(store.db, token)).toEqual({ workspaceId: 'team-x', scope: 'read' });
      const rows = await store.db.selectFrom('api_tokens').select('token_hash').execute();
      expect(rows.map((r) => r.token_hash)).not.toContain(token);
    });
  });

  it('refuses bad usage with exit code 2 and a clear message', async () => {
    expect((await cli('token', 'create', '--workspace', 'x', '--scope', 'root')).code).toBe(2);
    const badPort = await cli('migrate', '--port', 'seventy');
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('ROTSCOPE_PORT (--port)');
    expect((await cli('frobnicate')).stderr).toContain('unknown command "frobnicate"');
  });

  it('imports a real Claude Code transcript, idempotently', async () => {
    const first = await cli('import', TRANSCRIPT);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('170 calls');
    const again = await cli('import', TRANSCRIPT);
    expect(again.code).toBe(0);
    const calls = await withStore((store) =>
      store.db
        .selectFrom('llm_calls')
        .select(['stream_key', 'producer'])
        .where('workspace_id', '=', 'default')
        .execute(),
    );
    expect(calls).toHaveLength(170);
    expect(new Set(calls.map((c) => c.stream_key)).size).toBe(6); // the main thread and five sidechains
    const missing = await cli('import', '/nonexistent.jsonl');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent.jsonl: cannot read (ENOENT)');
  });
});
