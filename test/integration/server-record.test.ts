/**
 * The per-user record of running servers and the default store (src/cli/server-record.ts,
 * src/cli/store-location.ts, findServerElsewhere in src/cli/held-data-dir.ts), on real files in
 * a temporary HOME, with the liveness and health checks injected so each decision is asserted:
 * which records count, which are removed, when a command would create a store beside a server.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.ts';
import { findServerElsewhere, ServerElsewhereError } from '../../src/cli/held-data-dir.ts';
import { runningServers, serverRecordDir, writeServerRecord } from '../../src/cli/server-record.ts';
import { chooseDataDir, legacyNotice, userDataDir } from '../../src/cli/store-location.ts';

const root = mkdtempSync(path.join(tmpdir(), 'rotscope-int-server-record-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshHome = () => {
  const home = path.join(root, `home-${n++}`);
  mkdirSync(home);
  return { HOME: home };
};

describe('server records', () => {
  it('are private, found while alive and answering, removed when stale or at stop', async () => {
    const env = freshHome();
    const remove = writeServerRecord(env, {
      pid: 101,
      url: 'http://127.0.0.1:4318',
      dataDir: '/d',
      startedAt: '2026-01-01T00:00:00Z',
    });
    writeServerRecord(env, {
      pid: 102,
      url: 'http://0.0.0.0:4400',
      dataDir: null,
      startedAt: '2026-01-02T00:00:00Z',
    });
    writeServerRecord(env, {
      pid: 103,
      url: 'http://127.0.0.1:4500',
      dataDir: '/e',
      startedAt: '2026-01-03T00:00:00Z',
    });
    const dir = serverRecordDir(env);
    expect(dir).toBe(path.join(env.HOME, '.local', 'state', 'rotscope', 'servers'));
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
    for (const f of readdirSync(dir))
      expect((statSync(path.join(dir, f)).mode & 0o777).toString(8)).toBe('600');
    writeFileSync(path.join(dir, '104.json'), 'not json');

    const asked: string[] = [];
    const live = await runningServers(env, {
      isAlive: (pid) => pid !== 103, // 103's process is gone
      answers: async (url) => {
        asked.push(url);
        return true;
      },
    });
    // newest first; the unspecified bind address is asked on loopback
    expect(live.map((s) => s.pid)).toEqual([102, 101]);
    expect(asked.sort()).toEqual(['http://127.0.0.1:4318', 'http://127.0.0.1:4400']);
    expect(readdirSync(dir).sort()).toEqual(['101.json', '102.json']);

    // alive but not answering (a reused pid): stale
    const answering = await runningServers(env, {
      isAlive: () => true,
      answers: async (u) => u.endsWith(':4318'),
    });
    expect(answering.map((s) => s.pid)).toEqual([101]);
    remove();
    remove(); // twice is safe
    expect(readdirSync(dir)).toEqual([]);
  });

  it('XDG_STATE_HOME moves them, when absolute', () => {
    expect(serverRecordDir({ HOME: '/h', XDG_STATE_HOME: '/s' })).toBe('/s/rotscope/servers');
    expect(serverRecordDir({ HOME: '/h', XDG_STATE_HOME: 'relative' })).toBe(
      '/h/.local/state/rotscope/servers',
    );
  });
});

describe('the default store', () => {
  it('is per user, unless chosen, or an earlier version left ./.rotscope with a database', () => {
    const env = freshHome();
    const cwd = path.join(root, `cwd-${n++}`);
    mkdirSync(path.join(cwd, '.rotscope'), { recursive: true });
    expect(userDataDir(env)).toBe(path.join(env.HOME, '.local', 'share', 'rotscope'));
    expect(userDataDir({ ...env, XDG_DATA_HOME: '/x' })).toBe('/x/rotscope');
    // an empty ./.rotscope is no store
    expect(chooseDataDir({}, env, cwd)).toEqual({ dataDir: userDataDir(env), source: 'default' });
    writeFileSync(path.join(cwd, '.rotscope', 'PG_VERSION'), '17\n');
    const legacy = chooseDataDir({}, env, cwd);
    expect(legacy).toEqual({ dataDir: path.join(cwd, '.rotscope'), source: 'legacy' });
    expect(legacyNotice(legacy, env)).toContain(`the default is now ${userDataDir(env)}`);
    expect(chooseDataDir({ env: '/chosen' }, env, cwd)).toEqual({
      dataDir: '/chosen',
      source: 'chosen',
    });
    expect(chooseDataDir({ flag: '/flag', env: '/chosen' }, env, cwd).dataDir).toBe('/flag');
  });

  it('a command uses a server elsewhere only when its own store is implicit and absent', async () => {
    const env = freshHome();
    const fresh = { dataDir: path.join(root, 'absent-store'), source: 'default' as const };
    const config = defaultConfig({ dataDir: fresh.dataDir });
    expect(await findServerElsewhere(fresh, config, env)).toBeUndefined(); // no server recorded
    // a real record of this test process, answering on an address nothing serves: stale
    writeServerRecord(env, {
      pid: process.pid,
      url: 'http://127.0.0.1:9',
      dataDir: '/srv',
      startedAt: 'x',
    });
    expect(await findServerElsewhere(fresh, config, env)).toBeUndefined();
    expect(readdirSync(serverRecordDir(env))).toEqual([]);
    const chosen = await findServerElsewhere({ ...fresh, source: 'chosen' }, config, env);
    expect(chosen).toBeUndefined();
    const onPostgres = await findServerElsewhere(
      fresh,
      defaultConfig({ databaseUrl: 'postgres://127.0.0.1/x' }),
      env,
    );
    expect(onPostgres).toBeUndefined();
    expect(
      new ServerElsewhereError('/a', {
        pid: 1,
        url: 'http://127.0.0.1:4318',
        dataDir: null,
        startedAt: 'x',
      }).holder,
    ).toMatchObject({ port: 4318, url: 'http://127.0.0.1:4318' });
  });
});
