/**
 * `rotscope import` through a running server (`ingest` scope; `admin` too): the command finds
 * the embedded data directory held by this server, so it sends each file's text here instead
 * of writing underneath it. `POST /api/import` normalizes one file as the command would
 * (src/receiver/import.ts) and stores it idempotently, as history; `POST /api/import/evaluate`
 * evaluates the conversations the files changed, once they are all in. Same rows, same
 * summary as an import with the server stopped. The server reads no file: the path only
 * names the file (a Codex `rollout-*.jsonl`, a sub-agent's `subagents/agent-*.jsonl`).
 * With a token, only the token's workspace; open on loopback with no token yet, any.
 *
 * An import holds several times its body in memory (src/receiver/import.ts
 * IMPORT_MEMORY_FACTOR), so its memory is bounded before the body is read, from its
 * Content-Length: over `maxImportBodyBytes` it gets 413; past `maxInflightImports` imports in
 * progress, or when the ingest byte budget (`maxInflightBytes`, `maxWorkspaceInflightBytes`)
 * cannot take IMPORT_MEMORY_FACTOR times its body, 429 with Retry-After. Both close the
 * connection, the body unread. A body sent without a Content-Length is reserved as it arrives.
 */
import { pipeline as pipe, Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { msToNs } from '../../ingest/attrs.ts';
import { evaluateImported } from '../../evaluator/now.ts';
import {
  IMPORT_EVALUATE_BATCH,
  IMPORT_MEMORY_FACTOR,
  importCutoffNs,
  importText,
} from '../../receiver/import.ts';
import { IngestPipeline } from '../../receiver/pipeline.ts';
import { ensureWorkspace, WORKSPACE_ID_PATTERN } from '../../store/workspaces.ts';
import { ByteBudget, InflightSlots, type Reservation } from '../../receiver/inflight.ts';
import { refuse, Refusal, writeRefusal } from '../errors.ts';
import { errorSchema } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { ownWorkspace } from './tokens.ts';
import { plural } from '../../model/plural.ts';

const workspace = z
  .string()
  .regex(new RegExp(WORKSPACE_ID_PATTERN))
  .optional()
  .describe("Default: the caller's workspace (a token may only name its own)");

const importBody = z.strictObject({
  workspace,
  path: z
    .string()
    .min(1)
    .max(4096)
    .describe("The file's path where the command read it: named in messages, never read"),
  text: z.string().describe("The file's text (UTF-8)"),
  historyBefore: z
    .string()
    .regex(/^[0-9]{1,20}$/)
    .optional()
    .describe(
      "The import's start (Unix ns; default and at most now): findings on calls before it are history, not sent",
    ),
});

const importedFile = z
  .object({
    workspace: z.string(),
    calls: z.number(),
    toolResults: z.number(),
    compactions: z.number(),
    conversations: z.number().describe('Conversations of its calls'),
    merged: z.number().describe('Calls stored already (by telemetry): merged, not added'),
    olderThanRetention: z.number().describe("Calls older than the server's retention window"),
    retentionDays: z.number().describe("The server's ROTSCOPE_RETENTION_DAYS (0 keeps everything)"),
    touched: z.array(z.string()).describe('Conversations it changed: evaluate them afterwards'),
  })
  .meta({ id: 'ImportedFile' });

const evaluateBody = z.strictObject({
  workspace,
  conversations: z.array(z.string().min(1).max(1024)).max(IMPORT_EVALUATE_BATCH),
});

const evaluation = z
  .object({
    fromHistory: z
      .number()
      .describe('Findings on imported history: stored with their time, not sent'),
    live: z.number().describe("Findings on calls after the import's start"),
    failed: z
      .array(z.object({ conversationId: z.string(), message: z.string() }))
      .describe("Conversations whose evaluation failed: the server's evaluator retries them"),
  })
  .meta({ id: 'ImportEvaluation' });

export const importRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;
  const { config } = deps;
  const pipeline = deps.pipeline ?? new IngestPipeline(deps.store, config);
  const imports = new InflightSlots(config.maxInflightImports);
  const budget =
    deps.ingestBudget ?? new ByteBudget(config.maxInflightBytes, config.maxWorkspaceInflightBytes);
  /** The reservation of each import admitted, grown as a body with no Content-Length arrives. */
  const reservations = new WeakMap<FastifyRequest, Reservation>();

  /** 413 or 429 before (or instead of) reading the rest of the body: the connection closes. */
  const refuseUnread = (
    request: FastifyRequest,
    reply: FastifyReply,
    code: 'too_large' | 'too_many_requests',
    message: string,
  ) =>
    writeRefusal(
      request,
      reply,
      new Refusal(code, message, { closeConnection: true }),
      config.retryAfterSeconds,
    );
  const overBudget = (bytes: number) =>
    `ingest bytes in flight over the budget (${config.maxInflightBytes} bytes, ${config.maxWorkspaceInflightBytes} per workspace) ` +
    `for this import's ${bytes} bytes (${IMPORT_MEMORY_FACTOR} times its body): retry after ${config.retryAfterSeconds} s`;

  /** Admits an import from its headers: a slot, and its memory reserved in the byte budget. */
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    const owner = request.workspaceId || 'default';
    const length = Number(request.headers['content-length'] ?? 0);
    const declared = Number.isSafeInteger(length) && length > 0 ? length : 0;
    if (declared > config.maxImportBodyBytes)
      return refuseUnread(
        request,
        reply,
        'too_large',
        `an import body of ${declared} bytes is over this server's limit of ${config.maxImportBodyBytes} bytes (ROTSCOPE_MAX_IMPORT_BODY_BYTES)`,
      );
    if (imports.tryAcquire(owner, reply.raw) !== 'acquired')
      return refuseUnread(
        request,
        reply,
        'too_many_requests',
        `${plural(imports.max, 'import')} in progress already (ROTSCOPE_MAX_INFLIGHT_IMPORTS): retry after ${config.retryAfterSeconds} s`,
      );
    const bytes = declared * IMPORT_MEMORY_FACTOR;
    const reservation = budget.open(owner, bytes, reply.raw);
    if (!reservation) return refuseUnread(request, reply, 'too_many_requests', overBudget(bytes));
    reservations.set(request, reservation);
  };

  /** A body longer than its reservation covers (sent without a Content-Length) grows it first. */
  const reserveAsRead = async (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: NodeJS.ReadableStream,
  ) => {
    const reservation = reservations.get(request);
    if (!reservation) return payload;
    let read = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        read += chunk.length;
        const more = read * IMPORT_MEMORY_FACTOR - reservation.bytes;
        if (more > 0 && !reservation.grow(more)) {
          const message = overBudget(read * IMPORT_MEMORY_FACTOR);
          return done(new Refusal('too_many_requests', message, { closeConnection: true }));
        }
        done(null, chunk);
      },
    });
    return pipe(payload, counted, () => {});
  };

  /** The workspace a request imports into, or the 403 message when its token may not. */
  const target = (
    request: Parameters<typeof ownWorkspace>[0],
    named: string | undefined,
  ): { workspace: string } | { refusal: string } => {
    const chosen = named ?? request.workspaceId;
    const own = ownWorkspace(request);
    return own !== undefined && chosen !== own
      ? {
          refusal: `this token belongs to workspace "${own}"; it cannot import into "${chosen}" (pass --workspace ${own}, or a token of "${chosen}")`,
        }
      : { workspace: chosen };
  };

  app.post(
    '/api/import',
    {
      config: { scope: 'ingest' },
      bodyLimit: config.maxImportBodyBytes,
      onRequest: admit,
      preParsing: reserveAsRead,
      schema: {
        body: importBody,
        response: {
          200: importedFile,
          400: errorSchema,
          403: errorSchema,
          413: errorSchema,
          429: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const chosen = target(request, request.body.workspace);
      if ('refusal' in chosen) return refuse(reply, 'forbidden', chosen.refusal);
      const now = BigInt(msToNs(Date.now()));
      const asked = request.body.historyBefore;
      const historyBefore = asked === undefined || BigInt(asked) > now ? now : BigInt(asked);
      await ensureWorkspace(db, chosen.workspace);
      const imported = await importText(
        pipeline,
        chosen.workspace,
        { path: request.body.path, text: request.body.text },
        {
          historyBeforeNs: historyBefore.toString(),
          // retention counts from now, whatever `historyBefore` (--notify moves it back)
          cutoffNs: importCutoffNs(config.retentionDays, Number(now / 1_000_000n)),
        },
      );
      if (!imported.ok) return refuse(reply, 'unsupported_file', imported.error);
      request.log.debug(
        { workspace: chosen.workspace, calls: imported.file.calls },
        'import: file stored',
      );
      return {
        workspace: chosen.workspace,
        ...imported.file,
        retentionDays: config.retentionDays,
      };
    },
  );

  app.post(
    '/api/import/evaluate',
    {
      config: { scope: 'ingest' },
      schema: {
        body: evaluateBody,
        response: { 200: evaluation, 403: errorSchema },
      },
    },
    async (request, reply) => {
      const chosen = target(request, request.body.workspace);
      if ('refusal' in chosen) return refuse(reply, 'forbidden', chosen.refusal);
      const evaluated = await evaluateImported(
        deps.store,
        chosen.workspace,
        request.body.conversations,
      );
      for (const { conversationId, message } of evaluated.failed)
        request.log.warn(
          { workspace: chosen.workspace, conversationId, message },
          'import: evaluation failed',
        );
      // the reason is in the server's log: a client is not told the database's own messages
      return {
        ...evaluated,
        failed: evaluated.failed.map(({ conversationId }) => ({
          conversationId,
          message: "see the server's log",
        })),
      };
    },
  );
});
