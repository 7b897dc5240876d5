/**
 * CPU time of the processes a benchmark runs, from Linux's /proc (user + system time): the
 * server child, this process (the load generator), and PostgreSQL's backends of one database
 * when the server is local. Rates alone hide where the work is on a machine whose cores the
 * server, the database and the generator share; CPU per span shows it. Null where /proc
 * cannot tell (another OS, a remote database).
 */
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Seconds of CPU a process has used; null when /proc cannot say (or names another program). */
export function processCpuSeconds(pid: number, program?: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(') ');
    if (program !== undefined && stat.slice(stat.indexOf('(') + 1, close) !== program) return null;
    const fields = stat.slice(close + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Seconds of CPU this process has used (user + system). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

type Query = (text: string) => Promise<{ rows: unknown[] }>;

/**
 * CPU of the database's backends between `start` and `stop`: those serving `database` at
 * either moment, read from /proc (a backend that starts and ends in between is missed; the
 * server's pools keep theirs open). Null when a backend's /proc entry cannot be read (the
 * database runs elsewhere).
 */
export async function databaseCpu(query: Query) {
  const pids = async () =>
    (
      (
        await query(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows as Array<{ pid: number }>
    ).map((row) => row.pid);
  const read = (list: number[]) =>
    new Map(list.map((pid) => [pid, processCpuSeconds(pid, 'postgres')]));
  const before = read(await pids());
  return {
    async stop(): Promise<number | null> {
      const after = read([...new Set([...before.keys(), ...(await pids())])]);
      let total = 0;
      for (const [pid, seconds] of after) {
        const start = before.has(pid) ? before.get(pid)! : 0;
        if (start === null) return null; // not a local postgres process
        if (seconds === null) {
          if (before.has(pid)) continue; // ended meanwhile: its time is lost
          return null;
        }
        total += seconds - start;
      }
      return total;
    },
  };
}

/** Microseconds per item, rounded; null stays null. */
export const microsEach = (seconds: number | null, items: number): number | null =>
  seconds === null || items === 0 ? null : Math.round((seconds / items) * 1e6);
