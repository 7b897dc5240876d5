/**
 * Token readings and context usage (conventions §9.3): the raw readings by ordered key
 * lookup, and `contextTokens` = fresh input + cache reads + cache writes with the rule that
 * decided whether the raw input already included the cache.
 */
import type { UsageRule } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { firstNum, firstStr, isObj, json, numField } from './attrs.ts';

const IN_RAW = [
  'gen_ai.usage.input_tokens',
  'llm.token_count.prompt',
  'gen_ai.usage.prompt_tokens',
  'ai.usage.inputTokens',
  'ai.usage.promptTokens',
  'input_tokens',
] as const;

const CACHE_READ = [
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_read_input_tokens',
  'llm.token_count.prompt_details.cache_read',
  'gen_ai.usage.input_tokens.cached',
  'ai.usage.cachedInputTokens',
  'ai.usage.inputTokenDetails.cacheReadTokens',
  'cache_read_tokens',
] as const;

const CACHE_WRITE = [
  'gen_ai.usage.cache_write.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.cache_creation_input_tokens',
  'llm.token_count.prompt_details.cache_write',
  'gen_ai.usage.input_tokens.cache_write',
  'ai.usage.inputTokenDetails.cacheWriteTokens',
] as const;

const OUT = [
  'gen_ai.usage.output_tokens',
  'llm.token_count.completion',
  'gen_ai.usage.completion_tokens',
  'ai.usage.outputTokens',
  'ai.usage.completionTokens',
  'output_tokens',
] as const;

/** Raw token readings of one call, before the context-usage rule. */
export interface RawUsage {
  inputTokensRaw: number | null;
  /** The attribute (or usage key) the raw input was read from; null when none or unknown. */
  inputKey?: string | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  outputTokens: number | null;
}

/** `RawUsage` plus the derived context usage and the rule that produced it. */
export interface Usage extends RawUsage {
  contextTokens: number | null;
  usageRule: UsageRule | null;
}

/** Vercel v5 puts Anthropic cache writes only in `ai.response.providerMetadata` JSON. */
function providerMetadataCacheWrite(attrs: Attributes): number | null {
  const raw = attrs['ai.response.providerMetadata'];
  if (raw === undefined) return null;
  const pm = json(raw);
  if (!isObj(pm)) return null;
  const a = pm['anthropic'];
  return isObj(a) ? numField(a, 'cacheCreationInputTokens') : null;
}

/** Cache keys of Langfuse `usage_details` (OpenAI integration: `input_cached_tokens`). */
const LANGFUSE_CACHE_READ = ['input_cached_tokens', 'input_cache_read', 'cache_read_input_tokens'];
const LANGFUSE_CACHE_WRITE = [
  'input_cache_creation',
  'input_cache_write',
  'cache_creation_input_tokens',
];

function firstField(o: Record<string, unknown>, keys: readonly string[]): number | null {
  for (const k of keys) {
    const n = numField(o, k);
    if (n !== null) return n;
  }
  return null;
}

/**
 * Langfuse SDK usage: the JSON object `langfuse.observation.usage_details`. Its `input`
 * excludes cached tokens (the OpenAI integration subtracts `cached_tokens` from
 * `prompt_tokens`); cache counts are separate keys. Null when the attribute is absent.
 */
function langfuseUsage(attrs: Attributes): RawUsage | null {
  const raw = attrs['langfuse.observation.usage_details'];
  if (raw === undefined) return null;
  const u = json(raw);
  if (!isObj(u)) return null;
  return {
    inputTokensRaw: numField(u, 'input'),
    inputKey: 'langfuse.observation.usage_details.input',
    cacheReadTokens: firstField(u, LANGFUSE_CACHE_READ),
    cacheWriteTokens: firstField(u, LANGFUSE_CACHE_WRITE),
    outputTokens: numField(u, 'output'),
  };
}

/** Reads the raw token counts of a span or log record (conventions §9.3 order). */
export function readRawUsage(attrs: Attributes): RawUsage {
  const lf = langfuseUsage(attrs);
  if (lf !== null) return lf;
  const cw =
    firstNum(attrs, CACHE_WRITE)?.value ??
    providerMetadataCacheWrite(attrs) ??
    firstNum(attrs, ['cache_creation_tokens'])?.value ??
    null;
  const input = firstNum(attrs, IN_RAW);
  return {
    inputTokensRaw: input?.value ?? null,
    inputKey: input?.key ?? null,
    cacheReadTokens: firstNum(attrs, CACHE_READ)?.value ?? null,
    cacheWriteTokens: cw,
    outputTokens: firstNum(attrs, OUT)?.value ?? null,
  };
}

/**
 * Semantic-convention input counts that include the cache (semconv ≥1.40). A producer that
 * sends its own cache-exclusive count beside one of these (Claude Code ≥ 2.1.3xx sends
 * `gen_ai.usage.input_tokens` = input + cache read + cache write beside its native
 * `input_tokens`, conventions §5.0.1) is read per attribute, not per producer.
 */
const INCLUSIVE_KEYS: ReadonlySet<string> = new Set(['gen_ai.usage.input_tokens']);

/**
 * How a producer's raw input count relates to the cache:
 * - `excludes`: every input count it sends excludes the cache (transcripts, Anthropic usage, Langfuse);
 * - `native_excludes`: its native keys exclude the cache, the semconv keys of
 *   {@link INCLUSIVE_KEYS} include it (Claude Code spans and log events);
 * - `unknown`: decided from the readings (see {@link contextUsage}).
 */
export type CacheConvention = 'excludes' | 'native_excludes' | 'unknown';

/**
 * Applies the context-usage rule (conventions §9.3), per attribute:
 * - a semconv input count of a producer whose native counts exclude cache (`native_excludes`):
 *   raw as is (`inclusive_attribute`, measured: Claude Code 2.1.332);
 * - a count known to exclude cache (`excludes`, or a native count of `native_excludes`):
 *   raw + cache (`exclusive_producer`);
 * - raw < cache read + cache write: raw must exclude cache, raw + cache (`exclusive_inferred`);
 * - cache readings present otherwise: raw taken as inclusive (`inclusive`). This is the
 *   ambiguous case: an exclusive producer with a small cache looks inclusive, and usage is then
 *   under-counted by at most the cache;
 * - no cache readings: raw as is (`no_cache`).
 * No raw input gives null usage. Whichever of a producer's keys is present, the usage is the
 * same number.
 */
export function contextUsage(raw: RawUsage, convention: CacheConvention): Usage {
  const { inputTokensRaw: inRaw, cacheReadTokens: cr, cacheWriteTokens: cw } = raw;
  let contextTokens: number | null = null;
  let usageRule: UsageRule | null = null;
  if (inRaw !== null) {
    const cache = (cr ?? 0) + (cw ?? 0);
    const semconvInclusive =
      convention === 'native_excludes' && INCLUSIVE_KEYS.has(raw.inputKey ?? '');
    if (semconvInclusive && inRaw >= cache) {
      contextTokens = inRaw;
      usageRule = 'inclusive_attribute';
    } else if (convention !== 'unknown' && !semconvInclusive) {
      contextTokens = inRaw + cache;
      usageRule = 'exclusive_producer';
    } else if (cr === null && cw === null) {
      contextTokens = inRaw;
      usageRule = 'no_cache';
    } else if (inRaw < cache) {
      contextTokens = inRaw + cache;
      usageRule = 'exclusive_inferred';
    } else {
      contextTokens = inRaw;
      usageRule = 'inclusive';
    }
  }
  return {
    inputTokensRaw: inRaw,
    cacheReadTokens: cr,
    cacheWriteTokens: cw,
    outputTokens: raw.outputTokens,
    contextTokens,
    usageRule,
  };
}

/** True when any usage key of rule 5 (§9.1) is present: a token-only span is a call candidate. */
export function hasUsageKeys(attrs: Attributes): boolean {
  for (const k in attrs) {
    if (
      k.startsWith('gen_ai.usage.') ||
      k.startsWith('llm.token_count.') ||
      k.startsWith('ai.usage.') ||
      k.startsWith('llm.usage.')
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Request model (§9.3): `gen_ai.request.model` → `llm.request.model_name` → `ai.model.id` →
 * `model` → `llm.model_name` → `langfuse.observation.model.name`.
 */
export function requestModel(attrs: Attributes): string | null {
  return firstStr(attrs, [
    'gen_ai.request.model',
    'llm.request.model_name',
    'ai.model.id',
    'model',
    'llm.model_name',
    'langfuse.observation.model.name',
  ]);
}

/** Response model (§9.3), falling back to the request model. */
export function responseModel(attrs: Attributes, request: string | null): string | null {
  return (
    firstStr(attrs, [
      'gen_ai.response.model',
      'llm.response.model_name',
      'ai.response.model',
      'llm.model_name',
    ]) ?? request
  );
}

/** Provider (§9.3), lower-cased: `gen_ai.provider.name` → `gen_ai.system` → `llm.provider` → `llm.system` → `ai.model.provider`. */
export function provider(attrs: Attributes): string | null {
  const p = firstStr(attrs, [
    'gen_ai.provider.name',
    'gen_ai.system',
    'llm.provider',
    'llm.system',
    'ai.model.provider',
  ]);
  return p === null ? null : p.toLowerCase();
}

/**
 * The requested output limit: `gen_ai.request.max_tokens`, `gen_ai.request.max_output_tokens`,
 * `llm.request.max_tokens`, `ai.settings.maxOutputTokens`/`maxTokens`, else
 * `llm.invocation_parameters` or Langfuse `langfuse.observation.model.parameters` JSON
 * (`max_tokens`, `max_completion_tokens`, `max_output_tokens`).
 */
export function maxOutputTokens(attrs: Attributes): number | null {
  const direct = firstNum(attrs, [
    'gen_ai.request.max_tokens',
    'gen_ai.request.max_output_tokens',
    'llm.request.max_tokens',
    'ai.settings.maxOutputTokens',
    'ai.settings.maxTokens',
  ]);
  if (direct !== null) return direct.value;
  const raw = attrs['llm.invocation_parameters'] ?? attrs['langfuse.observation.model.parameters'];
  if (raw === undefined) return null;
  const p = json(raw);
  if (!isObj(p)) return null;
  return (
    numField(p, 'max_tokens') ??
    numField(p, 'max_completion_tokens') ??
    numField(p, 'max_output_tokens') ??
    numField(p, 'maxOutputTokens')
  );
}

/**
 * Why a span's (or log record's) token counts cannot be stored, or null when they can: a
 * count read by {@link readRawUsage} or {@link maxOutputTokens} that is negative, not a
 * whole number, or beyond 2^53 (an int64 that no longer fits exactly, or a larger number) is
 * refused with its span rather than stored wrong.
 */
export function invalidTokenCount(attrs: Attributes): string | null {
  const usage = readRawUsage(attrs);
  const counts: Array<[string, number | null]> = [
    ['input', usage.inputTokensRaw],
    ['cache read', usage.cacheReadTokens],
    ['cache write', usage.cacheWriteTokens],
    ['output', usage.outputTokens],
    ['max output', maxOutputTokens(attrs)],
  ];
  for (const [name, value] of counts) {
    if (value !== null && !(Number.isSafeInteger(value) && value >= 0))
      return `${name} token count ${value} is not a whole number from 0 to 2^53-1`;
  }
  return null;
}
