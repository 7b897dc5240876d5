/**
 * The pieces every JSON API route schema is built from, in zod. A route's zod schemas are its
 * fastify validation, its TypeScript types (the type provider infers `request.body` etc.) and
 * its part of the OpenAPI document (@fastify/swagger through fastify-type-provider-zod).
 *
 * Conventions: request objects are strict (an unknown field is a 400 naming it) except where
 * a route reports unknown fields itself; response objects strip what they do not list, as the
 * JSON-schema serializer did. Query values arrive as text, so numbers in a query are coerced.
 */
import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from './cursor.ts';

export { isoTime } from '../model/findings.ts';

/** Every 4xx/5xx body of the JSON API. */
/** One problem of a 400: where in the request it is (`['body', 'thresholds', 'toolShare']`) and what. */
export const problemSchema = z
  .object({
    path: z
      .array(z.union([z.string(), z.int()]))
      .describe('The request part (body, querystring, params) and the keys down to the field.'),
    message: z.string(),
  })
  .meta({ id: 'Problem' });
export type Problem = z.infer<typeof problemSchema>;

export const errorSchema = z
  .object({
    error: z.string().describe('A stable code: bad_request, not_found, forbidden, ...'),
    message: z.string(),
    problems: z
      .array(problemSchema)
      .optional()
      .describe('A 400 for input: every problem, each with the field it is about.'),
  })
  .meta({ id: 'Error' });

/** A bigint id in a path or query (channels, findings, deliveries). */
export const bigintId = z.string().regex(/^[1-9][0-9]{0,17}$/);

/** `{ id }` path parameters. */
export const idParams = (id: z.ZodString) => z.strictObject({ id });

/** The `cursor` query parameter of every list. */
export const cursorQuery = z
  .string()
  .max(MAX_CURSOR_LENGTH)
  .optional()
  .describe('The `next` of the previous page.');

/** The `limit` query parameter of a list: a whole number 1..`max`, default 50. */
export const limitQuery = (max: number) => z.coerce.number().int().min(1).max(max).default(50);

/** A list page (DESIGN §8): `{ items, next }`, `next` the cursor of the next page or null. */
export const pageOf = <Item extends z.ZodType>(item: Item) =>
  z.object({
    items: z.array(item),
    next: z.string().nullable().describe('Pass as `?cursor=` for the next page; null at the end.'),
  });
