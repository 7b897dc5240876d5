/**
 * The one place an error becomes an answer, for the OTLP routes and the JSON API alike:
 * {@link refusalOf} turns whatever a route, hook or the store threw into a {@link Refusal} of the
 * one map (src/model/errors.ts: code → HTTP status and google.rpc code), and
 * {@link writeRefusal} writes it in the form of its surface: a `google.rpc.Status` in the
 * request's encoding on /v1/*, `{ error, message }` on the JSON API.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Refusal, type RefusalCode, type RefusalOptions } from '../model/errors.ts';
import { statusBody, CONTENT_TYPES } from '../otlp/responses.ts';
import { encodingOf } from '../receiver/otlp.ts';
import { isDatabaseUnavailable, isRetryableConflict } from '../store/connection-errors.ts';
import { isOtlpPath } from './routed-path.ts';

export {
  isDatabaseUnavailable,
  isRetryableConflict,
  isRetryableFailure,
} from '../store/connection-errors.ts';
export { Refusal, type RefusalCode } from '../model/errors.ts';

/**
 * A value the database refused (SQLSTATE class 22, data exception): the request's data is at
 * fault, not the server, and sending it again will not help.
 */
export function isDataError(error: unknown): error is { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * The refusal of an error: a {@link Refusal} as it is; a status the framework (or a plugin)
 * raised, by its status; the store unreachable or a lost race, 503; a value the database cannot
 * store, 400 (on both surfaces); anything else, `internal` (500, its details logged, never
 * answered).
 */
export function refusalOf(error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof status === 'number' && status >= 400 && status < 500)
    return Refusal.ofStatus(status, message);
  if (isDatabaseUnavailable(error))
    return new Refusal('db_unavailable', 'database unavailable, retry later');
  // the store retried it already; the client sends it again after Retry-After
  if (isRetryableConflict(error))
    return new Refusal(
      'write_conflict',
      'the batch lost a race with a concurrent write, retry later',
    );
  if (isDataError(error))
    return new Refusal(
      'unstorable_value',
      `a value in this request cannot be stored: ${error.message}`,
    );
  return new Refusal('internal', 'internal error');
}

/**
 * Writes a refusal: its status from the map, Retry-After for the codes that retry (the
 * refusal's own wait or `retryAfterSeconds`), `connection: close` when the rest of the body is
 * not read; the body a `google.rpc.Status` (the map's code) in the request's encoding on the
 * OTLP routes (unknown types get JSON), the JSON API's `{ error, message, problems? }` elsewhere.
 */
export function writeRefusal(
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: Refusal,
  retryAfterSeconds: number,
): FastifyReply {
  const { options } = refusal;
  if (options.closeConnection) reply.header('connection', 'close');
  if (refusal.retries)
    reply.header('retry-after', String(options.retryAfterSeconds ?? retryAfterSeconds));
  reply.code(refusal.status);
  if (isOtlpPath(request)) {
    const encoding = encodingOf(request.headers['content-type']) ?? 'json';
    return reply
      .type(CONTENT_TYPES[encoding])
      .send(statusBody(encoding, refusal.rpc, refusal.message));
  }
  return reply.send(jsonBody(refusal));
}

/** The JSON API's error body. */
function jsonBody(refusal: Refusal) {
  const { problems, extra } = refusal.options;
  return {
    error: refusal.error,
    message: refusal.message,
    ...extra,
    ...(problems ? { problems } : {}),
  };
}

/**
 * A JSON API route's refusal, answered at once: the status from the map, `{ error, message }`
 * (and `extra`, `problems`) as the body. For the Retry-After codes, throw a {@link Refusal}
 * instead: the error handler knows the server's wait.
 */
export function refuse<Reply extends FastifyReply>(
  reply: Reply,
  code: Exclude<RefusalCode, 'too_many_requests' | 'unavailable' | 'db_unavailable'>,
  message: string,
  options: Pick<RefusalOptions, 'extra' | 'problems'> = {},
): Reply {
  const refusal = new Refusal(code, message, options);
  (reply as FastifyReply).code(refusal.status).send(jsonBody(refusal));
  return reply;
}
