import { describe, expect, it } from 'vitest';
import {
  type CacheConvention,
  contextUsage,
  maxOutputTokens,
  provider,
  readRawUsage,
  requestModel,
  responseModel,
} from '../../../src/ingest/tokens.ts';
import type { Attributes } from '../../../src/model/telemetry.ts';

describe('readRawUsage: every spelling (conventions §9.3)', () => {
  const cases: Array<[string, Attributes, Partial<ReturnType<typeof readRawUsage>>]> = [
    [
      'semconv ≥1.40',
      {
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.cache_read.input_tokens': 60,
        'gen_ai.usage.cache_creation.input_tokens': 30,
        'gen_ai.usage.output_tokens': 7,
      },
      { inputTokensRaw: 100, cacheReadTokens: 60, cacheWriteTokens: 30, outputTokens: 7 },
    ],
    [
      'semconv-genai cache_write rename wins over cache_creation',
      {
        'gen_ai.usage.input_tokens': 1,
        'gen_ai.usage.cache_write.input_tokens': 5,
        'gen_ai.usage.cache_creation.input_tokens': 9,
      },
      { cacheWriteTokens: 5 },
    ],
    [
      'OpenLLMetry legacy underscores',
      {
        'gen_ai.usage.prompt_tokens': 50,
        'gen_ai.usage.cache_read_input_tokens': 20,
        'gen_ai.usage.cache_creation_input_tokens': 10,
        'gen_ai.usage.completion_tokens': 3,
      },
      { inputTokensRaw: 50, cacheReadTokens: 20, cacheWriteTokens: 10, outputTokens: 3 },
    ],
    [
      'OpenInference',
      {
        'llm.token_count.prompt': 941,
        'llm.token_count.prompt_details.cache_read': 0,
        'llm.token_count.prompt_details.cache_write': 4,
        'llm.token_count.completion': 1202,
      },
      { inputTokensRaw: 941, cacheReadTokens: 0, cacheWriteTokens: 4, outputTokens: 1202 },
    ],
    [
      'Sentry aliases',
      {
        'gen_ai.usage.input_tokens': 9,
        'gen_ai.usage.input_tokens.cached': 2,
        'gen_ai.usage.input_tokens.cache_write': 1,
      },
      { cacheReadTokens: 2, cacheWriteTokens: 1 },
    ],
    [
      'Vercel legacy doGenerate',
      { 'ai.usage.promptTokens': 12, 'ai.usage.completionTokens': 4 },
      { inputTokensRaw: 12, outputTokens: 4 },
    ],
    [
      'Vercel doStream',
      { 'ai.usage.inputTokens': 12, 'ai.usage.cachedInputTokens': 8, 'ai.usage.outputTokens': 4 },
      { inputTokensRaw: 12, cacheReadTokens: 8, outputTokens: 4 },
    ],
    [
      'Vercel v5 Anthropic cache write in providerMetadata',
      {
        'ai.usage.inputTokens': 3,
        'ai.response.providerMetadata': '{"anthropic":{"cacheCreationInputTokens":700}}',
      },
      { cacheWriteTokens: 700 },
    ],
    [
      'Claude Code unprefixed',
      {
        input_tokens: 2,
        cache_read_tokens: 84562,
        cache_creation_tokens: 7096,
        output_tokens: 1200,
      },
      { inputTokensRaw: 2, cacheReadTokens: 84562, cacheWriteTokens: 7096, outputTokens: 1200 },
    ],
    ['int64 as numeric strings', { 'gen_ai.usage.input_tokens': '2256' }, { inputTokensRaw: 2256 }],
    [
      'nothing',
      {},
      { inputTokensRaw: null, cacheReadTokens: null, cacheWriteTokens: null, outputTokens: null },
    ],
  ];
  it.each(cases)('%s', (_c, attrs, expected) => {
    expect(readRawUsage(attrs)).toMatchObject(expected);
  });
});

describe('contextUsage: inclusive/exclusive rule (conventions §9.3)', () => {
  const raw = (i: number | null, r: number | null, w: number | null) => ({
    inputTokensRaw: i,
    cacheReadTokens: r,
    cacheWriteTokens: w,
    outputTokens: null,
  });
  const cases: Array<
    [string, ReturnType<typeof raw>, CacheConvention, number | null, string | null]
  > = [
    ['Claude Code excludes cache', raw(2, 84562, 7096), 'excludes', 91660, 'exclusive_producer'],
    [
      'Claude Code with no cache readings',
      raw(50, null, null),
      'excludes',
      50,
      'exclusive_producer',
    ],
    ['raw < cache: must be exclusive', raw(3, 1000, 200), 'unknown', 1203, 'exclusive_inferred'],
    ['raw ≥ cache: inclusive (semconv ≥1.40)', raw(1300, 1000, 200), 'unknown', 1300, 'inclusive'],
    [
      'ambiguous small cache is taken as inclusive',
      raw(1000, 200, null),
      'unknown',
      1000,
      'inclusive',
    ],
    ['cache read 0 is still a reading', raw(941, 0, null), 'unknown', 941, 'inclusive'],
    ['no cache readings', raw(2256, null, null), 'unknown', 2256, 'no_cache'],
    ['no raw input: unknown', raw(null, 500, null), 'unknown', null, null],
  ];
  it.each(cases)('%s', (_c, r, convention, tokens, rule) => {
    const u = contextUsage(r, convention);
    expect(u.contextTokens).toBe(tokens);
    expect(u.usageRule).toBe(rule);
  });
});

describe('Claude Code 2.1.332: semconv and native token attributes (conventions §5.0.1)', () => {
  // the token attributes of a real 2.1.332 `claude_code.llm_request` span (steady scenario)
  const native = {
    input_tokens: 8,
    cache_read_tokens: 21_000,
    cache_creation_tokens: 600,
    output_tokens: 60,
  };
  const semconv = {
    'gen_ai.usage.input_tokens': 21_608,
    'gen_ai.usage.cache_read.input_tokens': 21_000,
    'gen_ai.usage.cache_write.input_tokens': 600,
    'gen_ai.usage.output_tokens': 60,
  };
  it.each([
    ['both, as 2.1.332 sends them', { ...native, ...semconv }, 'inclusive_attribute'],
    ['only the native counts, as 2.1.197 sends them', native, 'exclusive_producer'],
    ['only the semconv counts', semconv, 'inclusive_attribute'],
  ])('%s: the same usage', (_c, attrs, rule) => {
    const u = contextUsage(readRawUsage(attrs), 'native_excludes');
    expect(u.contextTokens).toBe(21_608);
    expect(u.usageRule).toBe(rule);
  });
  it('a semconv count below the cache cannot include it: read as exclusive', () => {
    const u = contextUsage(
      readRawUsage({ 'gen_ai.usage.input_tokens': 8, cache_read_tokens: 21_000 }),
      'native_excludes',
    );
    expect(u.contextTokens).toBe(21_008);
    expect(u.usageRule).toBe('exclusive_inferred');
  });
});

describe('models, provider, max output tokens', () => {
  it('request model order and response fallback', () => {
    expect(requestModel({ 'gen_ai.request.model': 'a', model: 'b' })).toBe('a');
    expect(requestModel({ 'llm.model_name': 'o1-2024-12-17' })).toBe('o1-2024-12-17');
    expect(requestModel({ model: 'claude-opus-4-6' })).toBe('claude-opus-4-6');
    expect(
      responseModel({ 'gen_ai.response.model': 'gpt-4.1-mini-2025-04-14' }, 'gpt-4.1-mini'),
    ).toBe('gpt-4.1-mini-2025-04-14');
    expect(responseModel({}, 'gpt-4.1-mini')).toBe('gpt-4.1-mini');
  });
  it('provider is lower-cased, new name first', () => {
    expect(provider({ 'gen_ai.system': 'Anthropic' })).toBe('anthropic');
    expect(provider({ 'gen_ai.provider.name': 'openai', 'gen_ai.system': 'x' })).toBe('openai');
    expect(provider({ 'llm.provider': 'openai' })).toBe('openai');
    expect(provider({})).toBeNull();
  });
  it.each([
    [{ 'gen_ai.request.max_tokens': 1024 }, 1024],
    [{ 'llm.invocation_parameters': '{"model": "o1", "max_completion_tokens": 8192}' }, 8192],
    [{ 'llm.invocation_parameters': '{"max_tokens": 300}' }, 300],
    [{ 'ai.settings.maxOutputTokens': 77 }, 77],
    [{ 'llm.invocation_parameters': 'not json' }, null],
    [{}, null],
  ] as Array<[Attributes, number | null]>)('maxOutputTokens %j', (attrs, expected) => {
    expect(maxOutputTokens(attrs)).toBe(expected);
  });
});
