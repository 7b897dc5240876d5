/**
 * The OpenAPI document's named components. Every answer schema carries its name in zod's global
 * registry (`.meta({ id })`, e.g. `Coverage` in src/reading/answers/coverage.ts), so
 * fastify-type-provider-zod writes it once under `components.schemas` and a `$ref` wherever a
 * route answers with it or an answer holds it. The type provider adds each registered schema
 * twice, as written (`Coverage`) and as read (`CoverageInput`): only the components the document
 * refers to are kept, so an answer no request sends is not documented as an input too.
 */
import type { SwaggerTransformObject } from '@fastify/swagger';
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod';

const PREFIX = '#/components/schemas/';

/** The document with its registered schemas as components, those it refers to only. */
export const answerComponents: SwaggerTransformObject = (input) => {
  const document = jsonSchemaTransformObject(input) as {
    paths?: unknown;
    components?: { schemas?: Record<string, unknown> };
  };
  const schemas = document.components?.schemas;
  if (!schemas) return document as ReturnType<SwaggerTransformObject>;
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(PREFIX)) {
        const name = child.slice(PREFIX.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(child);
    }
  };
  visit(document.paths);
  document.components!.schemas = Object.fromEntries(
    Object.keys(schemas)
      .filter((name) => used.has(name))
      .sort()
      .map((name) => [name, schemas[name]]),
  );
  return document as ReturnType<SwaggerTransformObject>;
};
