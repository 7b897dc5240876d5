/**
 * Vitest global setup: after the run, drop the per-file databases tests created on the
 * machine's PostgreSQL (`rotscope_test_*`) that nothing is connected to any more, so repeated
 * CI runs do not pile them up. Nothing to do on PGlite.
 */
import pg from 'pg';

export default function setup(): () => Promise<void> {
  return async () => {
    const url = process.env.DATABASE_URL;
    if (!url) return;
    const admin = new pg.Client({ connectionString: url });
    try {
      await admin.connect();
      const { rows } = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database d
          WHERE datname LIKE 'rotscope\\_test\\_%'
            AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
      );
      for (const { datname } of rows) {
        await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
      }
    } catch {
      // cleanup is best effort: a failure here must not fail the run
    } finally {
      await admin.end().catch(() => {});
    }
  };
}
