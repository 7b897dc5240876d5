/**
 * Prepared statements for the hot queries of ingest and evaluation. PostgreSQL plans every
 * query it is sent; over the daily partitions of `llm_calls` and `log_records` (migration
 * 0010) planning a one-conversation read costs ~0.4 ms where running it costs ~0.05 ms. A
 * statement prepared once per connection is planned generically after five runs and then
 * not at all.
 *
 * A query opts in by ending with `PREPARED` (a SQL comment, so PGlite and any other path run
 * it unchanged); `preparingQueries` names such queries on a `pg` client, which prepares
 * each name once per connection. Only a handful of fixed query texts carry the mark, so the
 * statements a connection holds stay few.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';

const MARK = '/* rotscope:prepared */';

/** Append to a kysely query (`.modifyEnd(PREPARED)`) to run it as a prepared statement. */
export const PREPARED = sql.raw(MARK);

/**
 * SQLSTATE 0A000 "cached plan must not change result type": a migration of another process
 * changed a table under a prepared `SELECT *`. The server keeps the old statement under its
 * name, so the client starts a new set of names.
 */
const CACHED_PLAN_CHANGED = '0A000';

/** Makes `client` send queries that end with `PREPARED` as named (prepared) statements. */
export function preparingQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let generation = 0;
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      const hash = createHash('sha1').update(text).digest('hex').slice(0, 16);
      name = `rotscope_${generation}_${hash}`;
      names.set(text, name);
    }
    return name;
  };
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text !== 'string' || !text.endsWith(MARK) || typeof args[2] === 'function')
      return query(...args);
    const result = query({ name: nameOf(text), text, values }) as Promise<unknown>;
    return result.catch((error: unknown) => {
      if ((error as { code?: string }).code === CACHED_PLAN_CHANGED) {
        generation += 1;
        names.clear();
      }
      throw error;
    });
  };
}
