/** Over the in-flight limit the receiver answers 429 with Retry-After at once, before reading the body. */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, untilInflight, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    loops: false,
    config: { maxInflightIngest: 2, retryAfterSeconds: 7 },
  });
});
afterAll(async () => {
  await server?.close();
});

/** Starts a request whose body never finishes: it stays in flight until `end()`. */
function slowRequest(url: string): { end: () => Promise<number> } {
  const body = JSON.stringify(jsonRequest([jsonSpan()]));
  const target = new URL(`${url}/v1/traces`);
  const held: Array<() => void> = [];
  let status = 0;
  const done = new Promise<number>((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        status = response.statusCode ?? 0;
        response.resume();
        response.on('end', () => resolve(status));
      },
    );
    request.on('error', reject);
    request.write(body.slice(0, 10));
    held.push(() => request.end(body.slice(10)));
  });
  return {
    end: () => {
      held.forEach((finish) => finish());
      return done;
    },
  };
}

describe('overload', () => {
  it('answers 429 with Retry-After while the limit is reached, and 200 once requests finish', async () => {
    const first = slowRequest(server.url);
    const second = slowRequest(server.url);
    await untilInflight(server, 2);
    const body = JSON.stringify(jsonRequest([jsonSpan()]));
    const refused = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('7');
    expect(JSON.parse(refused.body.toString())).toEqual({
      code: 8,
      message: 'too many requests in flight',
    });

    expect(await first.end()).toBe(200);
    expect(await second.end()).toBe(200);
    const accepted = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
    });
    expect(accepted.status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /rotscope_ingest_rejected_total\{signal="spans",reason="overloaded"\} 1/,
    );
  });
});
