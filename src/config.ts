/**
 * One schema for every setting, validated at start; all violations are reported at once and
 * the result is frozen. Env variables and CLI flags map onto the same keys (flags win).
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const bool = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

export const configSchema = z.object({
  /** postgres:// URL. Unset: the embedded PGlite database in dataDir. */
  databaseUrl: z.string().url().optional(),
  /**
   * Directory of the embedded database. The CLI's default is one per-user place,
   * `$XDG_DATA_HOME/rotscope` (else `~/.local/share/rotscope`), or an earlier version's
   * `./.rotscope` where one holds a database (src/cli/store-location.ts); `./.rotscope` here
   * is the default of code that builds a config itself.
   */
  dataDir: z.string().min(1).default('./.rotscope'),
  /** Address to listen on. Default 127.0.0.1 (loopback: open without tokens until one exists). */
  host: z.string().min(1).default('127.0.0.1'),
  /** Port for OTLP/HTTP, the API, the console and health. Default 4318 (the OTLP/HTTP port). */
  port: port.default(4318),
  /**
   * An admin token for the `default` workspace, stored (hashed) at start when no token exists
   * yet: the first run of a container. Ignored once any token exists. Unset and bound to a
   * non-loopback address with no token, serve generates one and logs it once. At least 20
   * printable ASCII characters, no spaces (e.g. `openssl rand -hex 32`).
   */
  bootstrapToken: z
    .string()
    .min(20)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII characters without spaces')
    .optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * How server logs are written: `json` (one JSON object a line, for collectors), `pretty` (a
   * line a person reads: time, level, message, fields), or `auto` (the default): pretty when
   * stdout is a terminal, JSON otherwise.
   */
  logFormat: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Largest request body accepted as sent (bytes, compressed or not). Default 8 MiB. */
  maxBodyBytes: positiveInt.default(8 * 1024 * 1024),
  /** Largest body after gzip decompression (bytes). Default 32 MiB. */
  maxDecompressedBytes: positiveInt.default(32 * 1024 * 1024),
  /** Concurrent ingest requests beyond which the receiver answers 429. Default 32. */
  maxInflightIngest: positiveInt.default(32),
  /**
   * The share of `maxInflightIngest` one workspace may hold (429 past it), so one workspace,
   * however many connections it opens, always leaves the rest to the others. Default 16 (half
   * the default slots; change it with `maxInflightIngest`).
   */
  maxWorkspaceInflightIngest: positiveInt.default(16),
  /**
   * The least rate (bytes per second) an ingest body must arrive at once `ingestBodyGraceMs` has
   * passed: a slower body is cut off (408, connection closed), freeing its slot and bytes well
   * before the request timeout. 0 turns it off. Default 1024 (1 KiB/s).
   */
  minIngestBytesPerSecond: z.coerce.number().int().min(0).default(1024),
  /** Time (ms) from the start of a body before `minIngestBytesPerSecond` applies. Default 2000. */
  ingestBodyGraceMs: z.coerce.number().int().min(0).default(2_000),
  /**
   * Admission by what the store can commit: a batch is refused at once (429 with Retry-After)
   * when the batches ahead of it could not be committed within this time (ms) at the commit
   * rate measured (docs/scaling.md). 0 turns it off. Default 2000.
   */
  maxIngestCommitWaitMs: z.coerce.number().int().min(0).default(2_000),
  /**
   * Bytes of ingest request bodies in flight, as sent and after gzip inflation, counted
   * together; a request that would take the total past it gets 429 with Retry-After before
   * more of it is read or inflated. A request alone in flight always passes (it is bounded by
   * the two size limits above). Default 128 MiB.
   */
  maxInflightBytes: positiveInt.default(128 * 1024 * 1024),
  /**
   * The share of `maxInflightBytes` one workspace may hold, so one busy workspace cannot
   * starve the others (429 past it). Default 64 MiB.
   */
  maxWorkspaceInflightBytes: positiveInt.default(64 * 1024 * 1024),
  /**
   * Largest body of `POST /api/import` (bytes): one file's text, JSON-escaped, that
   * `rotscope import` sends to the server holding the embedded data directory. A larger one gets
   * 413 from its Content-Length, unread (the command says to import it with the server
   * stopped). Default 128 MiB.
   */
  maxImportBodyBytes: positiveInt.default(128 * 1024 * 1024),
  /**
   * Imports (`POST /api/import`) in progress at once; another gets 429 with Retry-After before
   * its body is read, and `rotscope import` sends it again then. Each import also reserves
   * five times its body in the byte budget of `maxInflightBytes` (what parsing and normalizing
   * it holds, docs/scaling.md). Default 1.
   */
  maxInflightImports: positiveInt.default(1),
  /**
   * Ingest rate limit per workspace, in inflated body bytes per second (a token bucket of one
   * second's worth; past it, 429 with Retry-After until the excess is paid off). 0 (the
   * default) turns it off.
   */
  workspaceIngestBytesPerSecond: z.coerce.number().int().min(0).default(0),
  /** Seconds a client is asked to wait (Retry-After) after a 429 or 503. Default 5. */
  retryAfterSeconds: positiveInt.default(5),
  /**
   * Time (ms) a client has to send a request's headers, from the moment it connects or starts
   * the request; a connection that sends nothing is closed after it too. At most
   * `requestTimeoutMs`. Default 10000 (10 s).
   */
  headersTimeoutMs: positiveInt.default(10_000),
  /**
   * Time (ms) a client has to send a whole request, headers and body; a slower one gets 408 and
   * its connection is closed, freeing its ingest slot. Default 30000 (30 s).
   */
  requestTimeoutMs: positiveInt.default(30_000),
  /** Time (ms) an idle keep-alive connection stays open between requests. Default 5000 (5 s). */
  keepAliveTimeoutMs: positiveInt.default(5_000),
  /**
   * Time (ms) a shutdown (SIGTERM, SIGINT) waits for requests in flight before closing their
   * connections; commits already running still finish. Default 10000 (10 s).
   */
  shutdownTimeoutMs: positiveInt.default(10_000),
  /**
   * Least time (ms) between two log lines of one kind of event (data received, request
   * refused, finding created, delivery outcome) for one workspace; the lines in between are
   * counted and reported as `suppressed` on the next one. Default 10000 (10 s).
   */
  logEventIntervalMs: z.coerce.number().int().min(0).default(10_000),
  /** Quiet period (ms) after a conversation's last new call before it is evaluated. Default 500. */
  evaluatorQuietMs: z.coerce.number().int().min(0).default(500),
  /**
   * Quiet time (ms) before evaluating conversations of producers that send a call's evidence
   * in two signals on separate schedules (Claude Code spans and log events, 5 s apart at most
   * by default), so a compaction in the logs is seen before the drop it explains. Default 6000.
   */
  splitEvidenceSettleMs: z.coerce.number().int().min(0).default(6_000),
  /**
   * Also keep every stored span as it arrived, in the raw `spans` table (for debugging a
   * producer). Nothing of rotscope reads it: the calls, tool results and compactions hold what
   * the detectors, the console and the reports need (docs/scaling.md). Default false.
   */
  keepRawSpans: bool.default(false),
  /** How often (ms) the evaluator looks for settled conversations. Default 200. */
  evaluatorPollMs: positiveInt.default(200),
  /** Run the evaluator in this process. Default true. */
  evaluator: bool.default(true),
  /** Run the notifier (outbox delivery loop) in this process. Default true. */
  notifier: bool.default(true),
  /** Timeout for one outbound delivery (ms). Default 10000. */
  deliveryTimeoutMs: positiveInt.default(10_000),
  /** Give up on a delivery (mark it dead) after this long (ms). Default 24 h. */
  deliveryGiveUpMs: positiveInt.default(24 * 60 * 60 * 1000),
  /** Allow outbound deliveries to private, loopback and link-local addresses. Default false. */
  allowPrivateAddresses: bool.default(false),
  /** Base URL of the console, used in links sent to channels. Default http://HOST:PORT. */
  publicUrl: z.string().url().optional(),
  /**
   * Serve `/metrics` without a token. Default false: once a token exists it needs a `read`
   * token, like the API (open to all while bound to loopback with no token, as the API is).
   */
  publicMetrics: bool.default(false),
  /** Serve `/api/openapi.json` without a token (same rule as `publicMetrics`). Default false. */
  publicApiDocs: bool.default(false),
  /**
   * The key that seals channel secrets at rest (AES-256-GCM): 32 bytes in base64 or hex
   * (`openssl rand -base64 32`). Unset: a key file `secret.key` in the data directory, made
   * on first use (mode 0600). Several servers on one PostgreSQL must share one key.
   */
  secretKey: z.string().min(1).optional(),
  /**
   * Retired keys (comma-separated, same form), still read while `rotscope secrets rotate`
   * re-seals what they sealed. Only with `secretKey`.
   */
  secretKeyPrevious: z.string().min(1).optional(),
  /** Delete spans and calls older than this many days. 0 keeps everything. Default 30. */
  retentionDays: z.coerce.number().int().min(0).default(30),
});

/** The schema plus the rules between settings (checked with them, reported the same way). */
const checkedSchema = configSchema.refine((c) => c.headersTimeoutMs <= c.requestTimeoutMs, {
  path: ['headersTimeoutMs'],
  message: 'must not be longer than the request timeout (ROTSCOPE_REQUEST_TIMEOUT_MS)',
});

export type Config = Readonly<z.infer<typeof configSchema>>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/** Env variable for each setting (DESIGN §8). Every one also has a `--kebab-case` flag. */
export const ENV_NAMES: Record<keyof z.infer<typeof configSchema>, string> = {
  databaseUrl: 'DATABASE_URL',
  dataDir: 'ROTSCOPE_DATA_DIR',
  host: 'ROTSCOPE_HOST',
  port: 'ROTSCOPE_PORT',
  bootstrapToken: 'ROTSCOPE_BOOTSTRAP_TOKEN',
  logLevel: 'ROTSCOPE_LOG_LEVEL',
  logFormat: 'ROTSCOPE_LOG_FORMAT',
  maxBodyBytes: 'ROTSCOPE_MAX_BODY_BYTES',
  maxDecompressedBytes: 'ROTSCOPE_MAX_DECOMPRESSED_BYTES',
  maxInflightIngest: 'ROTSCOPE_MAX_INFLIGHT_INGEST',
  maxWorkspaceInflightIngest: 'ROTSCOPE_MAX_WORKSPACE_INFLIGHT_INGEST',
  minIngestBytesPerSecond: 'ROTSCOPE_MIN_INGEST_BYTES_PER_SECOND',
  ingestBodyGraceMs: 'ROTSCOPE_INGEST_BODY_GRACE_MS',
  maxIngestCommitWaitMs: 'ROTSCOPE_MAX_INGEST_COMMIT_WAIT_MS',
  retryAfterSeconds: 'ROTSCOPE_RETRY_AFTER_SECONDS',
  maxInflightBytes: 'ROTSCOPE_MAX_INFLIGHT_BYTES',
  maxWorkspaceInflightBytes: 'ROTSCOPE_MAX_WORKSPACE_INFLIGHT_BYTES',
  maxImportBodyBytes: 'ROTSCOPE_MAX_IMPORT_BODY_BYTES',
  maxInflightImports: 'ROTSCOPE_MAX_INFLIGHT_IMPORTS',
  workspaceIngestBytesPerSecond: 'ROTSCOPE_WORKSPACE_INGEST_BYTES_PER_SECOND',
  headersTimeoutMs: 'ROTSCOPE_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'ROTSCOPE_REQUEST_TIMEOUT_MS',
  keepAliveTimeoutMs: 'ROTSCOPE_KEEP_ALIVE_TIMEOUT_MS',
  shutdownTimeoutMs: 'ROTSCOPE_SHUTDOWN_TIMEOUT_MS',
  logEventIntervalMs: 'ROTSCOPE_LOG_EVENT_INTERVAL_MS',
  evaluatorQuietMs: 'ROTSCOPE_EVALUATOR_QUIET_MS',
  splitEvidenceSettleMs: 'ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS',
  keepRawSpans: 'ROTSCOPE_KEEP_RAW_SPANS',
  evaluatorPollMs: 'ROTSCOPE_EVALUATOR_POLL_MS',
  evaluator: 'ROTSCOPE_EVALUATOR',
  notifier: 'ROTSCOPE_NOTIFIER',
  deliveryTimeoutMs: 'ROTSCOPE_DELIVERY_TIMEOUT_MS',
  deliveryGiveUpMs: 'ROTSCOPE_DELIVERY_GIVE_UP_MS',
  allowPrivateAddresses: 'ROTSCOPE_ALLOW_PRIVATE_ADDRESSES',
  publicUrl: 'ROTSCOPE_PUBLIC_URL',
  retentionDays: 'ROTSCOPE_RETENTION_DAYS',
  publicMetrics: 'ROTSCOPE_PUBLIC_METRICS',
  publicApiDocs: 'ROTSCOPE_PUBLIC_API_DOCS',
  secretKey: 'ROTSCOPE_SECRET_KEY',
  secretKeyPrevious: 'ROTSCOPE_SECRET_KEY_PREVIOUS',
};

export function flagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * Builds the config from env variables and flags (`{ 'data-dir': '...' }`); flags win.
 * Empty env values count as unset.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  flags: Record<string, string | boolean | undefined> = {},
): ConfigResult {
  const raw: Record<string, unknown> = {};
  for (const [key, envName] of Object.entries(ENV_NAMES)) {
    const fromFlag = flags[flagName(key)];
    const fromEnv = env[envName];
    if (fromFlag !== undefined) raw[key] = fromFlag;
    else if (fromEnv !== undefined && fromEnv !== '') raw[key] = fromEnv;
  }
  const parsed = checkedSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((issue) => {
        const key = String(issue.path[0] ?? '');
        const name =
          key in ENV_NAMES
            ? `${ENV_NAMES[key as keyof typeof ENV_NAMES]} (--${flagName(key)})`
            : key;
        return `${name}: ${issue.message}`;
      }),
    };
  }
  return { ok: true, config: Object.freeze(parsed.data) };
}

/** The defaults, for tests and tools that need a config without an environment. */
export function defaultConfig(overrides: Partial<z.infer<typeof configSchema>> = {}): Config {
  return Object.freeze({ ...configSchema.parse({}), ...overrides });
}
