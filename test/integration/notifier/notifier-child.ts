/**
 * A notifier in a process of its own, for the kill test: `node --import tsx notifier-child.ts`
 * with DATABASE_URL and LEASE_MS set. Prints "started" once running; runs until killed.
 */
import { startNotifier } from '../../../src/notifier/notifier.ts';
import { openStore } from '../../../src/store/db.ts';
import { testConfig } from './fixtures.ts';

const store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir: 'memory://' });
const quiet = () => {};
startNotifier({
  store,
  config: testConfig({ deliveryTimeoutMs: 30_000 }),
  log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
  pollMs: 25,
  leaseMs: Number(process.env.LEASE_MS ?? 1_000),
});
process.stdout.write('started\n');
