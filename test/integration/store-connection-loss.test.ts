/**
 * A pooled PostgreSQL connection killed while checked out (inside a transaction, between two
 * statements) must not end the process: pg emits 'error' on that client, which had no listener
 * (issue 14 item 2). The transaction rejects with an error classified as "database
 * unavailable", and the pool serves the next query on a fresh connection. Postgres only.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/store/connection-errors.ts';
import { createTestStore, usingPostgres, type TestStore } from '../helpers/store.ts';

describe.skipIf(!usingPostgres)('a pooled connection killed while checked out', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(async () => {
    await store?.close();
  });

  async function terminate(pid: number): Promise<void> {
    const admin = new pg.Client({ connectionString: store.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
  }

  it('rejects the transaction as unavailable, keeps the process up, and recovers', async () => {
    const outcome = await store.db
      .transaction()
      .execute(async (trx) => {
        const { rows } = await sql<{
          pid: number;
          name: string;
        }>`SELECT pg_backend_pid() AS pid, current_setting('application_name') AS name`.execute(
          trx,
        );
        expect(rows[0]?.name).toBe('rotscope');
        await terminate(rows[0]!.pid);
        // The FATAL 57P01 arrives while no statement is running on this client.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`SELECT 1`.execute(trx);
        return 'committed';
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(Error);
    expect(isDatabaseUnavailable(outcome)).toBe(true);

    const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(store.db);
    expect(rows).toEqual([{ ok: 1 }]);
  });
});

describe('isDatabaseUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['admin shutdown (pg_terminate_backend)', withCode('57P01')],
    ['crash shutdown', withCode('57P02')],
    ['starting up / shutting down', withCode('57P03')],
    ['too many connections', withCode('53300')],
    ['connection failure', withCode('08006')],
    ['protocol violation (class 08)', withCode('08P01')],
    ['refused socket', withCode('ECONNREFUSED')],
    ['reset socket', withCode('ECONNRESET')],
    ['both loopback addresses refused', new AggregateError([withCode('ECONNREFUSED')])],
    ['lost connection', new Error('Connection terminated unexpectedly')],
    ['pool timeout', new Error('timeout exceeded when trying to connect')],
    ['dead client', new Error('Client has encountered a connection error and is not queryable')],
    ['discarded by kysely', new Error('Postgres connection has been discarded')],
    ['wrapped', new Error('ingest failed', { cause: withCode('57P01') })],
  ])('%s is unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['unique violation', withCode('23505')],
    ['bad value', withCode('22P02')],
    ['syntax error', withCode('42601')],
    ['a bug', new TypeError('cannot read properties of undefined')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
