/**
 * The database goes away mid-stream (a TCP proxy in front of the real PostgreSQL is cut):
 * the receiver answers 503 with Retry-After, keeps running, and recovers when it returns.
 * Postgres only: the embedded PGlite cannot become unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../../src/api/app.ts';
import { defaultConfig } from '../../../src/config.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { migrate } from '../../../src/store/migrate.ts';
import { createTestDatabase, usingPostgres } from '../../helpers/store.ts';
import { hex, jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts';

describe.skipIf(!usingPostgres)('when the database is unreachable', () => {
  let proxy: TcpProxy;
  let store: Store;
  let app: App;
  let url: string;

  beforeAll(async () => {
    const direct = new URL((await createTestDatabase())!);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.port = String(proxy.port);
    store = await openStore({ databaseUrl: viaProxy.toString(), dataDir: 'memory://' });
    await migrate(store.db);
    app = await buildApp({
      store,
      config: defaultConfig({ retryAfterSeconds: 3, keepRawSpans: true }),
    });
    url = await app.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.app.close();
    await store?.close();
    await proxy?.close();
  });

  it('answers 503 with Retry-After, does not crash, and recovers', async () => {
    const send = (traceId: string) =>
      post(`${url}/v1/traces`, JSON.stringify(jsonRequest([jsonSpan({ traceId })])), {
        'content-type': 'application/json',
      });
    const before = hex(16);
    expect((await send(before)).status).toBe(200);

    proxy.cut();
    for (let i = 0; i < 3; i++) {
      const response = await send(hex(16));
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('3');
      expect(JSON.parse(response.body.toString())).toMatchObject({ code: 14 });
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(503);

    proxy.restore();
    const after = hex(16);
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
      status = (await send(after)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const rows = await store.db
      .selectFrom('spans')
      .select('trace_id')
      .where('trace_id', 'in', [before, after])
      .execute();
    expect(rows).toHaveLength(2);
  });
});
