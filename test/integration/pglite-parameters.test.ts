/**
 * PGlite binds at most 32,767 parameters in one statement; past that it once accepted the
 * statement and then answered every later query on the connection with no rows (a 1,000-row
 * insert of 33-column llm_calls rows left the strip and What was lost answering 404). The pool
 * refuses such a statement before it is sent, and the connection stays usable.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_PGLITE_PARAMETERS,
  PGlitePool,
  TooManyParametersError,
} from '../../src/store/pglite-pool.ts';

let db: PGlite;
beforeAll(async () => {
  db = new PGlite();
  await db.exec('CREATE TABLE t (v int)');
});
afterAll(async () => {
  await db.close();
});

/** `INSERT INTO t VALUES ($1), ($2), ...` with `n` parameters. */
const insertOf = (n: number) =>
  `INSERT INTO t (v) VALUES ${Array.from({ length: n }, (_, i) => `($${i + 1})`).join(', ')}`;

describe.skipIf(!!process.env.DATABASE_URL)('PGlite pool: parameters per statement', () => {
  it('binds the most PGlite takes, refuses one more, and the connection keeps answering', async () => {
    const pool = new PGlitePool(db);
    const client = await pool.connect();
    try {
      const most = Array.from({ length: MAX_PGLITE_PARAMETERS }, (_, i) => i);
      await client.query(insertOf(most.length), most);
      await expect(client.query(insertOf(most.length + 1), [...most, 1])).rejects.toBeInstanceOf(
        TooManyParametersError,
      );
      const { rows } = await client.query('SELECT count(*)::int AS n FROM t', []);
      expect(rows).toEqual([{ n: MAX_PGLITE_PARAMETERS }]);
    } finally {
      client.release();
    }
  });
});
