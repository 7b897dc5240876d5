/**
 * `COPY … FROM STDIN` as the ingest path runs it (src/store/copy-in.ts on PostgreSQL: the
 * statement, the data and CopyDone in one write; PGlite's /dev/blob otherwise), on the
 * connection the store lends: rows arrive, and a COPY the database refuses (before it starts,
 * or half-way through its data) rejects with the database's error and leaves the connection
 * usable for the next statement, the next COPY included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyWriter } from '../../../src/store/copy-binary.ts';
import type { RawConnection } from '../../../src/store/raw-connection.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';

function rows(values: Array<[number, string]>): Buffer {
  const writer = new CopyWriter(['int4', 'text']);
  for (const row of values) writer.row(row);
  return writer.finish();
}

const INTO_PROBE = 'COPY copy_probe (id, label) FROM STDIN (FORMAT binary)';

/** The database's error a COPY rejected with, or null when it went through. */
function refusalOf(copy: Promise<void>): Promise<{ code?: string } | null> {
  return copy.then(
    () => null,
    (error: { code?: string }) => error,
  );
}

describe('COPY FROM STDIN on a lent connection', () => {
  let store: TestStore;
  let connection: RawConnection;
  beforeAll(async () => {
    store = await createTestStore();
    connection = await store.connect();
    await connection.query('CREATE TABLE copy_probe (id int PRIMARY KEY, label text NOT NULL)');
  });
  afterAll(async () => {
    connection?.release();
    await store?.close();
  });

  const count = async () =>
    Number(
      (
        (await connection.query('SELECT count(*)::int AS n FROM copy_probe')).rows[0] as {
          n: number;
        }
      ).n,
    );

  it('stores the rows, large data included', async () => {
    const many = Array.from({ length: 20_000 }, (_, i): [number, string] => [i, 'x'.repeat(100)]);
    await connection.copyIn(INTO_PROBE, rows(many));
    expect(await count()).toBe(20_000);
  });

  it('rejects a COPY that fails half-way through its data, and the connection goes on', async () => {
    const data = rows([
      [50_000, 'new'],
      [1, 'exists already'],
      [50_001, 'never stored'],
    ]);
    const failure = await refusalOf(connection.copyIn(INTO_PROBE, data));
    expect(failure?.code).toBe('23505');
    expect(await count()).toBe(20_000);
    await connection.copyIn(INTO_PROBE, rows([[60_000, 'after']]));
    expect(await count()).toBe(20_001);
  });

  it('rejects a COPY the database refuses before it starts, and the connection goes on', async () => {
    const failure = await refusalOf(
      connection.copyIn('COPY no_such_table (id) FROM STDIN (FORMAT binary)', rows([[1, 'a']])),
    );
    expect(failure?.code).toBe('42P01'); // undefined_table
    const { rows: answer } = await connection.query('SELECT 1 AS one');
    expect(answer).toEqual([{ one: 1 }]);
  });

  it('rejects a COPY inside a transaction and rolls back to a savepoint as the ingest path does', async () => {
    await connection.query('BEGIN');
    await connection.query('SAVEPOINT job');
    const failure = await refusalOf(connection.copyIn(INTO_PROBE, rows([[60_000, 'dup']])));
    expect(failure?.code).toBe('23505');
    await connection.query('ROLLBACK TO SAVEPOINT job');
    await connection.copyIn(INTO_PROBE, rows([[70_000, 'in the transaction']]));
    await connection.query('COMMIT');
    expect(await count()).toBe(20_002);
  });
});
