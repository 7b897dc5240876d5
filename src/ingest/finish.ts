/** Finish (stop) reasons: the raw value by the ordered lookup of conventions §9.4, and its class. */
import type { FinishClass } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { isObj, json } from './attrs.ts';

const CLASSES: ReadonlyMap<string, FinishClass> = new Map<string, FinishClass>([
  ['model_context_window_exceeded', 'context_overflow'],
  ['length', 'output_limit'],
  ['max_tokens', 'output_limit'],
  ['max_output_tokens', 'output_limit'],
  ['tool_use', 'tool_call'],
  ['tool_calls', 'tool_call'],
  ['tool_call', 'tool_call'],
  ['tool-calls', 'tool_call'],
  ['function_call', 'tool_call'],
  ['stop', 'stop'],
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['pause_turn', 'paused'],
  ['refusal', 'refusal'],
  ['content_filter', 'refusal'],
  ['content-filter', 'refusal'],
  // Gemini spellings (upper case in the API): blocked output is a refusal
  ['safety', 'refusal'],
  ['recitation', 'refusal'],
  ['blocklist', 'refusal'],
  ['prohibited_content', 'refusal'],
  ['spii', 'refusal'],
  ['compaction', 'compaction'],
  ['error', 'error'],
  ['malformed_function_call', 'error'],
]);

/**
 * Classes a raw finish reason (case-insensitive, conventions §9.4). Unknown values are
 * `other`; null or empty input gives null. Note that Vercel folds
 * `model_context_window_exceeded` into `length`, so `output_limit` may hide an overflow.
 */
export function classifyFinishReason(raw: string | null): FinishClass | null {
  if (raw === null) return null;
  const k = raw.trim().toLowerCase();
  if (k === '') return null;
  return CLASSES.get(k) ?? (OVERFLOW_ERROR.test(k) ? 'context_overflow' : 'other');
}

/**
 * Error texts of requests refused because the input does not fit the context window
 * (Anthropic "prompt is too long: N tokens > M maximum", OpenAI "maximum context length",
 * "context_length_exceeded").
 */
const OVERFLOW_ERROR =
  /prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|exceeds? the (model's )?context window/;

/**
 * The error of a failed request when it says the input did not fit the context window (Claude
 * Code's `llm_request` span and `api_error` event: `error`, `status_code` 400), cut to 200
 * characters; else null. Kept as the call's raw finish reason, classed `context_overflow`.
 */
export function overflowError(attrs: Attributes): string | null {
  for (const k of ['error', 'error.message', 'exception.message']) {
    const v = attrs[k];
    if (typeof v === 'string' && OVERFLOW_ERROR.test(v.toLowerCase())) return v.slice(0, 200);
  }
  return null;
}

function firstOfArray(v: unknown): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (Array.isArray(v)) {
    for (const x of v) if (typeof x === 'string' && x !== '') return x;
  }
  return null;
}

/**
 * The raw finish reason of a span, first source present wins (conventions §9.4):
 * `gen_ai.response.finish_reasons` (array or JSON-string array), `llm.finish_reason`,
 * `stop_reason` (and the Anthropic SDK's `anthropic.message.stop_reason`),
 * `gen_ai.completion.N.finish_reason`, `ai.response.finishReason`, then the
 * deprecated `finish_reason` of `gen_ai.output.messages` (already parsed by the caller) and
 * a raw response in `output.value` (`choices[0].finish_reason`, `stop_reason`,
 * `incomplete_details.reason`).
 */
export function readFinishReason(
  attrs: Attributes,
  outputMessages: unknown,
  rawOutput: () => unknown,
): string | null {
  const fr = attrs['gen_ai.response.finish_reasons'];
  if (fr !== undefined && fr !== null) {
    const v =
      typeof fr === 'string' && fr.startsWith('[') ? firstOfArray(json(fr)) : firstOfArray(fr);
    if (v !== null) return v;
  }
  for (const k of [
    'llm.finish_reason',
    'stop_reason',
    'anthropic.message.stop_reason', // @anthropic-ai/sdk 1.x own spans
    'gen_ai.completion.0.finish_reason',
  ]) {
    const v = attrs[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  const ai = attrs['ai.response.finishReason'];
  if (typeof ai === 'string' && ai !== '') return ai;
  if (Array.isArray(outputMessages)) {
    for (const m of outputMessages) {
      if (isObj(m) && typeof m['finish_reason'] === 'string' && m['finish_reason'] !== '') {
        return m['finish_reason'];
      }
    }
  }
  const out = rawOutput();
  if (isObj(out)) {
    const choices = out['choices'];
    if (Array.isArray(choices) && isObj(choices[0])) {
      const f = choices[0]['finish_reason'];
      if (typeof f === 'string' && f !== '') return f;
    }
    const sr = out['stop_reason'];
    if (typeof sr === 'string' && sr !== '') return sr;
    const inc = out['incomplete_details'];
    if (isObj(inc) && typeof inc['reason'] === 'string') return inc['reason'];
  }
  return null;
}
