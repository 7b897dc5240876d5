/**
 * The path a request is judged by. The router decodes percent-escapes before it matches
 * (`/%61pi/channels/1` is routed to `/api/channels/:id`), so a check that reads the raw URL
 * can be walked around: every check that depends on the path (CSRF, the shutdown refusal, how
 * a refusal is written) asks this module instead.
 */
import type { FastifyRequest } from 'fastify';

/** The matched route's pattern (`/api/channels/:id`), or the decoded path when none matched. */
export function routedPath(request: FastifyRequest): string {
  return request.routeOptions.url ?? decodedPath(request.url);
}

/** The URL's path with its percent-escapes decoded (left as it is where they are malformed). */
export function decodedPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Whether the request goes to an OTLP route (`/v1/traces`, `/v1/logs`, `/v1/metrics`). */
export function isOtlpPath(request: FastifyRequest): boolean {
  return routedPath(request).startsWith('/v1/');
}
