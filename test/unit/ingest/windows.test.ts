import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  agentOfCall,
  agentOfResource,
  catalogRow,
  catalogWindow,
  claudeCodeAgent,
  contextWindowFor,
  nextKnownSize,
} from '../../../src/ingest/windows.ts';
import {
  CLAUDE_CODE_VERSIONS,
  claudeCodeVersionStatus,
  compareVersions,
  WINDOW_CATALOG,
} from '../../../src/model/window-catalog.ts';

describe('catalogWindow', () => {
  it.each([
    ['claude-opus-4-6', 200_000],
    ['claude-sonnet-4-20250514', 200_000],
    ['claude-sonnet-4-5', 200_000],
    ['claude-opus-4-6[1m]', 1_000_000],
    ['claude-sonnet-4-5-1m', 1_000_000],
    ['us.anthropic.claude-3-5-sonnet-20240620-v1:0', 200_000],
    ['anthropic/claude-3-haiku', 200_000],
    ['claude-instant-1.2', 100_000],
    ['gpt-4.1', 1_047_576],
    ['gpt-4.1-mini-2025-04-14', 1_047_576],
    ['gpt-4o', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['gpt-4-turbo', 128_000],
    ['gpt-4', 8_192],
    ['gpt-3.5-turbo', 16_385],
    ['gpt-5', 400_000],
    ['gpt-5-mini', 400_000],
    ['o1', 200_000],
    ['o1-2024-12-17', 200_000],
    ['o1-mini', 128_000],
    ['o3-mini', 200_000],
    ['o4-mini', 200_000],
    ['gemini-2.5-pro', 1_048_576],
    ['models/gemini-2.0-flash', 1_048_576],
    ['gemini-1.5-flash', 1_048_576],
    ['gemini-1.5-pro', 2_097_152],
    ['my-local-model', null],
    // issue 19 §3: new ids, and the family catch-alls that guessed for ids nobody checked
    ['claude-opus-5-5', 1_000_000],
    ['anthropic/claude-opus-5-5', 1_000_000],
    // issue 34: what Claude Code 2.1.332 itself reports for its `sonnet` and `haiku` aliases
    ['claude-sonnet-5-5', 1_000_000],
    ['claude-haiku-5-5', 1_000_000],
    ['claude-sonnet-5-6', null],
    ['claude-fable-5-2', null],
    ['claude-opus-4-1', 200_000],
    ['claude-haiku-4-5', 200_000],
    ['claude-2.1', 200_000],
    ['gpt-5.5', 272_000],
    ['openai/gpt-5.5-2026-04-23', 272_000],
    ['gpt-5-codex', 400_000],
    ['gpt-5.1', 400_000],
    ['gpt-5.2-codex', 400_000],
    ['gpt-5-chat-latest', 128_000],
    ['gpt-5.4', null],
    ['gpt-6', null],
    ['gpt-6-mini', null],
    ['gemini-3-pro-preview', 1_048_576],
    // Gemini CLI 0.61.0's default and router models; its own tokenLimit gives them 1,048,576
    ['gemini-3.1-pro-preview', 1_048_576],
    ['gemini-3.5-flash-lite', 1_048_576],
    ['gemma-4-31b-it', 256_000],
    ['deepseek-chat', 128_000],
    ['deepseek-v4', null],
  ] as Array<[string, number | null]>)('%s → %s', (model, window) => {
    expect(catalogWindow(model)).toBe(window);
  });
});

describe('contextWindowFor', () => {
  it('catalog', () => {
    expect(contextWindowFor('claude-opus-4-6', 50_000, [])).toEqual({
      window: 200_000,
      source: 'catalog',
    });
  });
  it('override glob wins over catalog (first match, case-insensitive)', () => {
    const o = [
      { model: 'CLAUDE-*', window: 500_000 },
      { model: 'claude-opus-*', window: 1 },
    ];
    expect(contextWindowFor('claude-opus-4-6', 10, o)).toEqual({
      window: 500_000,
      source: 'override',
    });
    expect(contextWindowFor('gpt-4o', 5, [{ model: 'gpt-4?', window: 9 }])).toEqual({
      window: 9,
      source: 'override',
    });
    expect(contextWindowFor('my-local-model', 10, [{ model: 'my-*', window: 32_000 }])).toEqual({
      window: 32_000,
      source: 'override',
    });
  });
  it('observed usage above the window moves it to the next known size up', () => {
    expect(contextWindowFor('claude-sonnet-4-5', 450_000, [])).toEqual({
      window: 1_000_000,
      source: 'inferred',
    });
    expect(contextWindowFor('gpt-4o', 130_000, [])).toEqual({
      window: 131_072,
      source: 'inferred',
    });
    expect(contextWindowFor('claude-opus-4-6', 200_000, [])).toEqual({
      window: 200_000,
      source: 'catalog',
    });
  });
  it('unknown or missing model: no window', () => {
    expect(contextWindowFor('my-local-model', 5_000, [])).toEqual({ window: null, source: null });
    expect(contextWindowFor(null, 5_000, [])).toEqual({ window: null, source: null });
    expect(contextWindowFor('claude-fable-5', 5_000, [])).toEqual({
      window: null,
      source: null,
    });
  });
  it('no guess from other vendors: usage above a window of no known family, or above the family, is unknown', () => {
    // was 100,000 `inferred`: the next size of any vendor's ladder
    expect(contextWindowFor('x', 40_000, [{ model: 'x', window: 32_000 }])).toEqual({
      window: null,
      source: null,
    });
    expect(contextWindowFor('deepseek-chat', 150_000, [])).toEqual({ window: null, source: null });
    expect(contextWindowFor('claude-opus-4-6', 1_200_000, [])).toEqual({
      window: null,
      source: null,
    });
    expect(nextKnownSize(150_000, 'mistral-large')).toBeNull();
    expect(nextKnownSize(250_000, 'claude-sonnet-4')).toBe(1_000_000);
    expect(nextKnownSize(300_000, 'gpt-5.5')).toBe(400_000);
  });
});

describe('precedence: override > what the agent says > catalog (for its version) > unknown', () => {
  const CC = (version: string | null) => claudeCodeAgent(version);

  it('an override wins over the model id and the catalog', () => {
    const o = [{ model: 'claude-*', window: 300_000 }];
    expect(contextWindowFor('claude-opus-4-6[1m]', 10, o)).toEqual({
      window: 300_000,
      source: 'override',
    });
    expect(contextWindowFor('claude-opus-4-8', 10, o, CC('2.1.197'))).toEqual({
      window: 300_000,
      source: 'override',
    });
    expect(contextWindowFor('claude-fable-5', 10, o)).toEqual({
      window: 300_000,
      source: 'override',
    });
  });

  it('the model id says 1M: source model_id, whatever the catalog or the version says', () => {
    for (const model of ['claude-opus-4-8[1m]', 'claude-sonnet-4-5-1m', 'claude-sonnet-5-5[1m]']) {
      expect(contextWindowFor(model, 10, [], CC('2.1.68')), model).toEqual({
        window: 1_000_000,
        source: 'model_id',
      });
    }
  });

  it.each([
    ['2.1.60', 200_000, 'catalog'],
    ['2.1.68', 200_000, 'catalog'],
    ['2.1.100', 1_000_000, 'assumed'],
    ['2.1.166', 1_000_000, 'assumed'],
    ['2.1.167', 1_000_000, 'catalog'],
    ['2.1.197', 1_000_000, 'catalog'],
    ['2.1.332', 1_000_000, 'catalog'],
    ['2.2.0', 1_000_000, 'catalog'],
    ['dev-build', 1_000_000, 'assumed'],
    [null, 1_000_000, 'assumed'],
  ] as Array<[string | null, number, string]>)(
    'claude-opus-4-8 in Claude Code %s: %s (%s)',
    (version, window, source) => {
      expect(contextWindowFor('claude-opus-4-8', 20_000, [], CC(version))).toEqual({
        window,
        source,
      });
    },
  );

  it('version rows are for the agent they name: no agent, the version-free row', () => {
    expect(contextWindowFor('claude-opus-4-8', 20_000, [])).toEqual({
      window: 1_000_000,
      source: 'assumed',
    });
    expect(contextWindowFor('claude-opus-4-8', 20_000, [], null)).toEqual({
      window: 1_000_000,
      source: 'assumed',
    });
  });

  it('usage above a version row window still moves it up (inferred)', () => {
    expect(contextWindowFor('claude-opus-4-8', 250_000, [], CC('2.1.68'))).toEqual({
      window: 1_000_000,
      source: 'inferred',
    });
  });

  it('claude-opus-5-5 is 1M in any version, with no [1m] in its id', () => {
    for (const agent of [CC('2.1.332'), CC('2.1.197'), CC(null), null]) {
      expect(contextWindowFor('claude-opus-5-5', 300_000, [], agent)).toEqual({
        window: 1_000_000,
        source: 'catalog',
      });
    }
  });

  it('gpt-5.5 is 272k (Codex catalog); usage above it is inferred on the GPT ladder', () => {
    expect(contextWindowFor('gpt-5.5', 100_000, [])).toEqual({
      window: 272_000,
      source: 'catalog',
    });
    expect(contextWindowFor('gpt-5', 100_000, [])).toEqual({ window: 400_000, source: 'catalog' });
  });
});

describe('the catalog as data', () => {
  it('every row says where its number comes from and when it was checked', () => {
    for (const row of WINDOW_CATALOG) {
      expect(row.evidence.length, row.model).toBeGreaterThan(10);
      expect(row.verified, row.model).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isInteger(row.window) && row.window > 0, row.model).toBe(true);
      for (const v of [row.agent?.from, row.agent?.through]) {
        if (v !== undefined) expect(compareVersions(v, v), `${row.model} ${v}`).toBe(0);
      }
    }
  });
  it('the row used is the first match for the model and the agent', () => {
    expect(catalogRow('claude-opus-4-8', claudeCodeAgent('2.1.68'))?.agent).toEqual({
      name: 'claude-code',
      through: '2.1.68',
    });
    expect(catalogRow('claude-opus-4-8')?.source).toBe('assumed');
    expect(catalogWindow('claude-opus-4-8', claudeCodeAgent('2.1.68'))).toBe(200_000);
    expect(catalogRow('gpt-6')).toBeNull();
  });
});

describe('the agent of a call', () => {
  it('Claude Code by its resource (service.name) or its span names, with service.version', () => {
    expect(
      agentOfResource({ 'service.name': 'claude-code', 'service.version': '2.1.332' }),
    ).toEqual({ name: 'claude-code', version: '2.1.332' });
    expect(agentOfResource({ 'service.name': 'agent-app', 'service.version': '1.0.0' })).toBeNull();
    expect(agentOfResource({}, true)).toEqual({ name: 'claude-code', version: null });
  });
  it("a stored call: Claude Code's producers with the version they recorded", () => {
    for (const producer of ['claude_code', 'claude_code_log', 'claude_code_transcript']) {
      expect(agentOfCall({ producer, agentVersion: '2.1.68' })).toEqual({
        name: 'claude-code',
        version: '2.1.68',
      });
    }
    expect(agentOfCall({ producer: 'semconv', agentVersion: null })).toBeNull();
  });
});

describe('Claude Code versions', () => {
  it('the oldest supported and the newest verified are in one constant', () => {
    expect(CLAUDE_CODE_VERSIONS).toEqual({
      oldestSupported: '2.1.197',
      newestVerified: '2.1.332',
      verified: ['2.1.197', '2.1.332'],
    });
  });
  it('agree with the versions the real-CLI scenarios run on (test/e2e/claude-code-real/versions.json)', () => {
    const file = new URL('../../e2e/claude-code-real/versions.json', import.meta.url);
    const { verified } = JSON.parse(readFileSync(file, 'utf8')) as { verified: string[] };
    expect(CLAUDE_CODE_VERSIONS.verified).toEqual(verified);
    expect(CLAUDE_CODE_VERSIONS.oldestSupported).toBe(verified[0]);
    expect(CLAUDE_CODE_VERSIONS.newestVerified).toBe(verified.at(-1));
  });
  it.each([
    ['2.1.197', 'verified'],
    ['2.1.332', 'verified'],
    ['2.1.274', 'supported'],
    ['2.1.68', 'older'],
    ['2.1.333', 'newer'],
    ['2.2.0', 'newer'],
    ['10.0.0', 'newer'],
    ['nightly', 'unknown'],
  ])('%s is %s', (version, status) => {
    expect(claudeCodeVersionStatus(version)).toBe(status);
  });
  it('versions compare by number, not as text', () => {
    expect(compareVersions('2.1.68', '2.1.167')).toBe(-1);
    expect(compareVersions('2.1.332', '2.1.332-beta')).toBe(0);
    expect(compareVersions('2.10.0', '2.9.9')).toBe(1);
    expect(compareVersions('x', '2.1.0')).toBeNull();
  });
});
