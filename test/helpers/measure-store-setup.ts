/**
 * Measures what one test file pays for its database, migrating it vs copying a migrated
 * template, on both backends in one run (N rounds each, interleaved, medians):
 *
 *   npx tsx test/helpers/measure-store-setup.ts [N]     (DATABASE_URL defaults to the local one)
 *
 * PostgreSQL: CREATE DATABASE + connect + migrate + drop, vs CREATE DATABASE … TEMPLATE + connect
 * + drop. PGlite: an in-memory PGlite + migrate, vs one loaded from a dumped migrated data dir.
 */
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

const N = Number(process.argv[2] ?? 10);
const BASE = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: BASE });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

const urlOf = (name: string) => Object.assign(new URL(BASE), { pathname: `/${name}` }).toString();

async function timed(run: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** Opens the store, checks the schema is there (one query), closes it. */
async function useStore(options: Parameters<typeof openStore>[0]): Promise<void> {
  const store = await openStore(options);
  await sql`SELECT count(*) FROM schema_migrations`.execute(store.db);
  await store.close();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const template = `rotscope_measure_tpl_${process.pid}`;
  await admin(`CREATE DATABASE ${template}`);
  const tplStore = await openStore({ databaseUrl: urlOf(template), dataDir: 'memory://' });
  await migrate(tplStore.db);
  await tplStore.close();

  const lite = await PGlite.create('memory://');
  const liteStore = await openStore({ dataDir: 'memory://', pglite: lite });
  await migrate(liteStore.db);
  const dump = await lite.dumpDataDir('none');
  await liteStore.close(); // closes the PGlite too

  const times: Record<string, number[]> = {
    'postgres migrate': [],
    'postgres template': [],
    'pglite migrate': [],
    'pglite load dump': [],
  };
  for (let i = 0; i < N; i++) {
    times['postgres migrate']!.push(
      await timed(async () => {
        const name = `rotscope_measure_${process.pid}_m${i}`;
        await admin(`CREATE DATABASE ${name}`);
        const store = await openStore({ databaseUrl: urlOf(name), dataDir: 'memory://' });
        await migrate(store.db);
        await store.close();
        await admin(`DROP DATABASE ${name} WITH (FORCE)`);
      }),
    );
    times['postgres template']!.push(
      await timed(async () => {
        const name = `rotscope_measure_${process.pid}_t${i}`;
        await admin(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        await useStore({ databaseUrl: urlOf(name), dataDir: 'memory://' });
        await admin(`DROP DATABASE ${name} WITH (FORCE)`);
      }),
    );
    times['pglite migrate']!.push(
      await timed(async () => {
        const store = await openStore({ dataDir: 'memory://' });
        await migrate(store.db);
        await store.close();
      }),
    );
    times['pglite load dump']!.push(
      await timed(async () => {
        const loaded = await PGlite.create('memory://', { loadDataDir: dump });
        await useStore({ dataDir: 'memory://', pglite: loaded });
      }),
    );
  }
  await admin(`DROP DATABASE ${template} WITH (FORCE)`);

  for (const [what, xs] of Object.entries(times)) {
    console.log(
      `${what.padEnd(18)} median ${median(xs).toFixed(0)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n=${xs.length})`,
    );
  }
  const ratio = (a: string, b: string) => (median(times[a]!) / median(times[b]!)).toFixed(2);
  console.log(`postgres: template/migrate = ${ratio('postgres template', 'postgres migrate')}`);
  console.log(`pglite:   load/migrate     = ${ratio('pglite load dump', 'pglite migrate')}`);
}

await main();
