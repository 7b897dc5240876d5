/**
 * Queries marked `PREPARED` (src/store/prepared.ts) run as named statements on PostgreSQL:
 * prepared once per connection, then executed by name. A table changed under a prepared
 * `SELECT *` (another process's migration) fails that one query with 0A000 and the next
 * run prepares it afresh. On PGlite the mark is a comment and the same query runs as is.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { PREPARED } from '../../src/store/prepared.ts';
import { createTestStore, usingPostgres, type TestStore } from '../helpers/store.ts';

let created: TestStore;
let store: Store;
beforeAll(async () => {
  created = await createTestStore();
  // One connection, so every query below runs in the same session.
  store = usingPostgres
    ? await openStore({ databaseUrl: created.url, dataDir: 'memory://', poolSize: 1 })
    : created;
  await sql`CREATE TABLE prepared_probe (id int PRIMARY KEY)`.execute(store.db);
  await sql`INSERT INTO prepared_probe VALUES (1), (2)`.execute(store.db);
});
afterAll(async () => {
  if (store !== created) await store?.close();
  await created?.close();
});

const probe = (id: number) =>
  store.db
    .selectFrom('prepared_probe' as never)
    .selectAll()
    .where(sql<boolean>`id = ${id}`)
    .modifyEnd(PREPARED)
    .execute() as Promise<Array<Record<string, unknown>>>;

const preparedNames = async () =>
  (
    await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(
      store.db,
    )
  ).rows.map((row) => row.name);

describe('prepared statements', () => {
  it('runs a marked query with its parameters, and on PostgreSQL prepares it once', async () => {
    expect(await probe(1)).toEqual([{ id: 1 }]);
    expect(await probe(2)).toEqual([{ id: 2 }]);
    expect(await probe(3)).toEqual([]);
    if (!usingPostgres) return;
    const names = (await preparedNames()).filter((name) => name.startsWith('rotscope_'));
    expect(names).toHaveLength(1);
    // An unmarked query is not prepared.
    await store.db
      .selectFrom('prepared_probe' as never)
      .selectAll()
      .execute();
    expect((await preparedNames()).filter((name) => name.startsWith('rotscope_'))).toEqual(names);
  });

  it.runIf(usingPostgres)(
    'recovers when a table changes under a prepared SELECT *: one failure, then the new columns',
    async () => {
      expect(await probe(1)).toEqual([{ id: 1 }]);
      const other = await openStore({ databaseUrl: created.url, dataDir: 'memory://' });
      try {
        await sql`ALTER TABLE prepared_probe ADD COLUMN note text DEFAULT 'x'`.execute(other.db);
      } finally {
        await other.close();
      }
      await expect(probe(1)).rejects.toMatchObject({ code: '0A000' });
      expect(await probe(1)).toEqual([{ id: 1, note: 'x' }]);
      expect(await probe(2)).toEqual([{ id: 2, note: 'x' }]);
    },
  );
});
