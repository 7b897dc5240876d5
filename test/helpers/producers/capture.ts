/**
 * A minimal loopback OTLP/HTTP JSON receiver: it keeps every export request as decoded
 * JSON, so a producer's exact output can be inspected and saved as a fixture
 * (test/fixtures/producers/<name>.json). Producers must be run with `protocol: 'json'`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CapturedExports {
  /** ExportTraceServiceRequest bodies, in arrival order. */
  traces: unknown[];
  /** ExportLogsServiceRequest bodies, in arrival order. */
  logs: unknown[];
}

export interface CaptureCollector extends CapturedExports {
  url: string;
  close(): Promise<void>;
}

export async function startCaptureCollector(): Promise<CaptureCollector> {
  const traces: unknown[] = [];
  const logs: unknown[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (!type.includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      if (req.url === '/v1/traces') traces.push(body);
      else if (req.url === '/v1/logs') logs.push(body);
      else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    traces,
    logs,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
