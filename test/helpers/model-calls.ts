/** What the window tests send a running rotscope (test/helpers/server.ts): JSON API calls and calls of one model. */
import { expect } from 'vitest';
import { hex, jsonRequest, jsonSpan } from './otlp-bodies.ts';

/** `method path` on the server's JSON API with a JSON body; the parsed answer, or a thrown error. */
export async function apiCall<T>(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A conversation of `inputs.length` calls of `model`, a second apart, its usage `inputs`, over OTLP/JSON. */
export async function sendModelConversation(
  baseUrl: string,
  model: string,
  conversationId: string,
  inputs: number[],
): Promise<void> {
  const start = BigInt(Date.now() - 60_000) * 1_000_000n;
  const traceId = hex(16);
  const spans = inputs.map((input, i) =>
    jsonSpan({
      traceId,
      name: `chat ${model}`,
      startNs: start + BigInt(i) * 1_000_000_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': model,
        'gen_ai.conversation.id': conversationId,
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': 100,
        'gen_ai.response.finish_reasons': 'stop',
      },
    }),
  );
  const response = await fetch(`${baseUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(jsonRequest(spans)),
  });
  expect(response.status, await response.text()).toBe(200);
}
