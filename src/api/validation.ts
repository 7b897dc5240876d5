/**
 * The JSON API's input rules, written once for every route: no string anywhere in a request
 * (path parameters, query, body; values and object keys) may hold a NUL or a lone UTF-16
 * surrogate, which PostgreSQL text and jsonb cannot store; requests are validated and
 * responses serialized by the routes' zod schemas (src/api/schemas.ts); unknown fields are
 * named in the 400. Routes get all of it by being registered through {@link withInputRules}.
 */
import type { FastifyPluginAsync, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import {
  serializerCompiler,
  validatorCompiler,
  type FastifyPluginAsyncZod,
} from 'fastify-type-provider-zod';
import { Refusal } from '../model/errors.ts';

/** The part of a request a schema error is about (fastify's `RequestPart`). */
type RequestPart = 'body' | 'headers' | 'params' | 'querystring';
type Problem = { path: Array<string | number>; message: string };

/** The refusal the JSON API answers as a 400 `bad_request` with this message (and its problems). */
export class BadRequestError extends Refusal {
  constructor(message: string, problems?: Problem[]) {
    super('bad_request', message, problems ? { problems } : {});
  }
}

/** Whether PostgreSQL can store a string as text or jsonb: no NUL, no lone UTF-16 surrogate. */
export function isStorableText(value: string): boolean {
  return value.isWellFormed() && !value.includes('\0');
}

/**
 * The path (`body/config/headers/X-A`) of the first string or object key in a parsed JSON
 * value that {@link isStorableText} refuses, or undefined when there is none. Walks with an
 * explicit stack, so a deeply nested body cannot overflow the call stack.
 */
export function findUnstorableText(value: unknown, root: string): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => stack.push([item, `${path}/${i}`]));
    } else if (isJsonObject(current)) {
      for (const [key, item] of Object.entries(current)) {
        if (!isStorableText(key)) return `${path} (a key)`;
        stack.push([item, `${path}/${key}`]);
      }
    }
  }
  return undefined;
}

/** Parsed JSON objects, query strings and path parameters; not raw bodies (Buffers). */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}

/** preValidation hook: a 400 naming the first field that holds unstorable text. */
async function refuseUnstorableText(request: FastifyRequest): Promise<void> {
  const parts: Array<[unknown, RequestPart]> = [
    [request.params, 'params'],
    [request.query, 'querystring'],
    [request.body, 'body'],
  ];
  for (const [value, name] of parts) {
    const path = findUnstorableText(value, name);
    if (path !== undefined)
      throw new BadRequestError(`${path} must not contain NUL or a lone UTF-16 surrogate`);
  }
}

/**
 * The 400 message of a request that fails its zod schema: each problem as `<part>/<path>
 * <what is wrong>` (`querystring/limit too big: expected number to be <=200`), an unknown field
 * as `body/config/foo is not a known field`; problems joined by `, `.
 */
export function formatSchemaErrors(
  errors: FastifySchemaValidationError[],
  dataVar: RequestPart,
): Error {
  const problems = errors.flatMap((error): Problem[] => {
    const keys = error.instancePath.split('/').filter((key) => key !== '');
    const path = [dataVar, ...keys].join('/');
    const unknown = (error.params as { keys?: unknown }).keys;
    if (error.keyword === 'unrecognized_keys' && Array.isArray(unknown))
      return unknown.map((key) => ({
        path: [dataVar, ...keys, String(key)],
        message: `${path}/${String(key)} is not a known field`,
      }));
    const message = error.message ?? 'is invalid';
    return [
      {
        path: [dataVar, ...keys],
        message: `${path} ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
      },
    ];
  });
  return new BadRequestError(problems.map((p) => p.message).join(', '), problems);
}

/** Registers a JSON API route plugin under the input rules above. */
export function withInputRules<Options extends object>(
  routes: FastifyPluginAsyncZod<Options>,
): FastifyPluginAsync<Options> {
  return async (app, options) => {
    app.addHook('preValidation', refuseUnstorableText);
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    app.setSchemaErrorFormatter(formatSchemaErrors);
    await app.register(routes, options);
  };
}
