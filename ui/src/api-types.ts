/**
 * The API's answers as the console reads them, by route: every answer type of the console is an
 * alias of the types generated from the server's OpenAPI document (./api-types.gen.ts,
 * `npm run gen:api-types`), so a schema change on the server is a type error here, not a
 * surprise in the browser.
 *
 *   type Coverage = Answer<'/api/coverage'>;
 *   type Created = Answer<'/api/tokens', 'post', 201>;
 *   type Token = Item<Answer<'/api/tokens'>>;
 */
import type { paths } from './api-types.gen.ts';

export type { paths };

/** A route of the API, as the OpenAPI document writes it (`/api/findings/{id}`). */
export type Route = keyof paths;

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The methods a route answers. */
export type MethodOf<R extends Route> = {
  [M in Method]-?: undefined extends paths[R][M] ? never : M;
}[Method];

type Responses<R extends Route, M extends MethodOf<R>> =
  NonNullable<paths[R][M]> extends { responses: infer Answers } ? Answers : never;

/** The JSON body of a route's answer with that status (default 200). */
export type Answer<
  R extends Route,
  M extends MethodOf<R> = 'get' & MethodOf<R>,
  S extends keyof Responses<R, M> = 200 & keyof Responses<R, M>,
> = Responses<R, M>[S] extends { content: { 'application/json': infer Body } } ? Body : never;

/** One entry of a list answer (`{ items, next }`). */
export type Item<List extends { items: readonly unknown[] }> = List['items'][number];

/** One problem of an API 400 (`problems`): the field it is about and what is wrong with it. */
export type Problem = NonNullable<
  Answer<'/api/alerts/context-rot', 'put', 400>['problems']
>[number];
