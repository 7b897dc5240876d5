/**
 * The one map of refusals: every code a request can be refused with, on the OTLP receiver and
 * the JSON API alike, and the HTTP status and google.rpc code each one is answered with (as the
 * OpenTelemetry Collector maps its errors in one place). src/api/errors.ts turns any error into a
 * {@link Refusal} and writes it in the form of its surface: a `google.rpc.Status` on /v1/*, the
 * JSON API's `{ error, message }` elsewhere. A code is never a loose string: it is a key of
 * {@link REFUSALS}.
 */

/** gRPC status codes used in `google.rpc.Status` bodies (google/rpc/code.proto). */
export const RPC_CODES = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type RpcCode = (typeof RPC_CODES)[keyof typeof RPC_CODES];

const { INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE } = RPC_CODES;

interface RefusalKind {
  status: number;
  rpc: RpcCode;
  /** Answered with Retry-After (the refusal's own wait, or ROTSCOPE_RETRY_AFTER_SECONDS). */
  retry?: true;
  /** The JSON API's `error` word when it is not the code itself. */
  error?: string;
}

/** Every code, its HTTP status and google.rpc code. */
export const REFUSALS = {
  /** Input the API cannot take: a schema problem, a bad cursor or time, a framework 400. */
  bad_request: { status: 400, rpc: INVALID_ARGUMENT },
  /** An OTLP body that is not protobuf or JSON of its signal, or not gzip when it says so. */
  undecodable: { status: 400, rpc: INVALID_ARGUMENT },
  /** A value the database refused (SQLSTATE class 22): the data is at fault; sending it again will not help. */
  unstorable_value: { status: 400, rpc: INVALID_ARGUMENT },
  /** An imported file of no agent this server reads. */
  unsupported_file: { status: 400, rpc: INVALID_ARGUMENT },
  unauthorized: { status: 401, rpc: RPC_CODES.UNAUTHENTICATED },
  forbidden: { status: 403, rpc: RPC_CODES.PERMISSION_DENIED },
  not_found: { status: 404, rpc: RPC_CODES.NOT_FOUND },
  /** A body slower than ROTSCOPE_MIN_INGEST_BYTES_PER_SECOND. */
  too_slow: { status: 408, rpc: RPC_CODES.DEADLINE_EXCEEDED },
  /** A change the resource's state refuses (the last admin token). */
  conflict: { status: 409, rpc: RPC_CODES.FAILED_PRECONDITION },
  too_large: { status: 413, rpc: INVALID_ARGUMENT },
  unsupported_media_type: { status: 415, rpc: INVALID_ARGUMENT },
  /** The JSON API's 429 (imports in progress, the byte budget). */
  too_many_requests: { status: 429, rpc: RESOURCE_EXHAUSTED, retry: true },
  /** OTLP: every ingest slot held, or the byte budget full. */
  overloaded: { status: 429, rpc: RESOURCE_EXHAUSTED, retry: true },
  /** OTLP: the workspace holds its share of the ingest slots. */
  workspace_overloaded: { status: 429, rpc: RESOURCE_EXHAUSTED, retry: true },
  /** OTLP: the workspace is over its ingest rate. */
  rate_limited: { status: 429, rpc: RESOURCE_EXHAUSTED, retry: true },
  /** OTLP: the store could not commit the batch within ROTSCOPE_MAX_INGEST_COMMIT_WAIT_MS. */
  store_behind: { status: 429, rpc: RESOURCE_EXHAUSTED, retry: true },
  /** The client went away before the commit (nginx's 499: seen only in the request metric). */
  client_gone: { status: 499, rpc: RPC_CODES.CANCELLED },
  /** A failure of ours; its details are logged, never answered. */
  internal: { status: 500, rpc: RPC_CODES.INTERNAL },
  /** Shutting down, or the database unreachable while a token was checked. */
  unavailable: { status: 503, rpc: UNAVAILABLE, retry: true },
  /** The database cannot be reached. */
  db_unavailable: { status: 503, rpc: UNAVAILABLE, retry: true, error: 'unavailable' },
  /** The write lost a race with a concurrent one, retried already. */
  write_conflict: { status: 503, rpc: UNAVAILABLE, retry: true, error: 'unavailable' },
  /** Another 4xx the framework raised (405, 411, ...): answered with the framework's status. */
  error: { status: 400, rpc: INVALID_ARGUMENT },
} as const satisfies Record<string, RefusalKind>;

/** The closed set of refusal codes. */
export type RefusalCode = keyof typeof REFUSALS;
export const REFUSAL_CODES = Object.keys(REFUSALS) as RefusalCode[];

/** The code of a status the framework (or a plugin) raised with no code of ours. */
const CODE_OF_STATUS: Partial<Record<number, RefusalCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  503: 'unavailable',
};

export interface RefusalOptions {
  /** Seconds for Retry-After, when not ROTSCOPE_RETRY_AFTER_SECONDS (codes with `retry`). */
  retryAfterSeconds?: number;
  /** Closes the connection: the rest of the body is not read. */
  closeConnection?: boolean;
  /** A 400's problems, each with the field it is about. */
  problems?: Array<{ path: Array<string | number>; message: string }>;
  /** Fields the JSON answer carries beside `error` and `message` (alert settings' `errors`). */
  extra?: Record<string, unknown>;
}

/** A refused request: its code, and from the map its HTTP status and google.rpc code. */
export class Refusal extends Error {
  readonly status: number;
  readonly rpc: RpcCode;
  /** The status as fastify reads it off an error. */
  statusCode: number;
  /** A 400's problems, where fastify's own error serializer reads them. */
  readonly problems: RefusalOptions['problems'];

  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly options: RefusalOptions = {},
    /** Only for `error`: the 4xx the framework raised. */
    frameworkStatus?: number,
  ) {
    super(message);
    this.status =
      code === 'error' && frameworkStatus !== undefined ? frameworkStatus : REFUSALS[code].status;
    this.rpc = REFUSALS[code].rpc;
    this.statusCode = this.status;
    this.problems = options.problems;
  }

  /** Whether the answer carries Retry-After. */
  get retries(): boolean {
    return 'retry' in REFUSALS[this.code];
  }

  /** The JSON API's `error` word. */
  get error(): string {
    const kind: RefusalKind = REFUSALS[this.code];
    return kind.error ?? this.code;
  }

  /** The refusal of a status the framework raised with no code of ours (4xx). */
  static ofStatus(status: number, message: string): Refusal {
    const code = CODE_OF_STATUS[status];
    return code ? new Refusal(code, message) : new Refusal('error', message, {}, status);
  }
}
