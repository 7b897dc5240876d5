/**
 * The agent's version reaches the window (issue 19 §3): Claude Code's `service.version` on the
 * resource of its spans and log events, and a transcript line's `version`, are kept on the call
 * (`agentVersion`) and pick the catalog rows bound to Claude Code versions. Real captures of
 * Claude Code 2.1.332 (test/fixtures/real/claude-code-2.1.332/PROVENANCE.md: default model
 * claude-opus-5-5, a 1M window with no [1m] in its id) and a transcript line written as 2.1.68 ran
 * it (claude-opus-4-8 on 200k).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import { CTX, capturedOtlp, log, span } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/claude-code-2.1.332');

describe('Claude Code 2.1.332, captured from the real CLI: claude-opus-5-5 is 1M', () => {
  const { spans, logs } = capturedOtlp(join(DIR, 'reread'));

  it('spans and api_request events: 1M from the catalog, with the version of the resource', () => {
    const calls = [
      ...normalizeSpans(spans, CTX).normalized.calls,
      ...normalizeLogs(logs, CTX).normalized.calls,
    ];
    expect(calls.length).toBeGreaterThan(1);
    for (const c of calls) {
      expect([c.responseModel, c.contextWindow, c.windowSource, c.agentVersion]).toEqual([
        'claude-opus-5-5',
        1_000_000,
        'catalog',
        '2.1.332',
      ]);
    }
  });

  it('the transcript: the same window, the version of each line', () => {
    const text = readFileSync(join(DIR, 'reread/transcript.jsonl'), 'utf8');
    const calls = normalizeTranscript(text, CTX).calls;
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect([c.contextWindow, c.windowSource, c.agentVersion]).toEqual([
        1_000_000,
        'catalog',
        '2.1.332',
      ]);
    }
  });
});

describe('claude-opus-4-8 by Claude Code version', () => {
  const llmRequest = (version: string | undefined) =>
    span({
      name: 'claude_code.llm_request',
      resource:
        version === undefined
          ? { 'service.name': 'claude-code' }
          : { 'service.name': 'claude-code', 'service.version': version },
      attributes: {
        'session.id': 'S',
        model: 'claude-opus-4-8',
        input_tokens: 10,
        cache_read_tokens: 120_000,
        cache_creation_tokens: 500,
        output_tokens: 100,
      },
    });

  it.each([
    ['2.1.68', 200_000, 'catalog'],
    ['2.1.197', 1_000_000, 'catalog'],
    [undefined, 1_000_000, 'assumed'],
  ] as Array<[string | undefined, number, string]>)(
    'a span of Claude Code %s: %s (%s)',
    (version, window, source) => {
      const c = normalizeSpans([llmRequest(version)], CTX).normalized.calls[0]!;
      expect([c.contextWindow, c.windowSource, c.agentVersion]).toEqual([
        window,
        source,
        version ?? null,
      ]);
    },
  );

  it('an api_request event of Claude Code 2.1.68: 200k', () => {
    const c = normalizeLogs(
      [
        log({
          eventName: 'claude_code.api_request',
          resource: { 'service.name': 'claude-code', 'service.version': '2.1.68' },
          attributes: {
            'event.name': 'api_request',
            'session.id': 'S',
            model: 'claude-opus-4-8',
            input_tokens: 10,
            cache_read_tokens: 150_000,
            output_tokens: 5,
            request_id: 'req_1',
          },
        }),
      ],
      CTX,
    ).normalized.calls[0]!;
    expect([c.contextWindow, c.windowSource, c.agentVersion]).toEqual([
      200_000,
      'catalog',
      '2.1.68',
    ]);
  });

  it('a transcript line written by Claude Code 2.1.68: 200k', () => {
    const line = {
      type: 'assistant',
      sessionId: 'S68',
      uuid: 'u1',
      timestamp: '2026-03-01T10:00:00.000Z',
      version: '2.1.68',
      isSidechain: false,
      message: {
        id: 'msg_1',
        role: 'assistant',
        model: 'claude-opus-4-8',
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: 'ok' }],
        usage: { input_tokens: 5, cache_read_input_tokens: 160_000, output_tokens: 3 },
      },
    };
    const c = normalizeTranscript(JSON.stringify(line), CTX).calls[0]!;
    expect([c.contextWindow, c.windowSource, c.agentVersion]).toEqual([
      200_000,
      'catalog',
      '2.1.68',
    ]);
  });

  it('a span of another producer keeps no agent version, and no version row applies', () => {
    const c = normalizeSpans(
      [
        span({
          resource: { 'service.name': 'agent-app', 'service.version': '2.1.68' },
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'claude-opus-4-8',
            'gen_ai.usage.input_tokens': 1_000,
          },
        }),
      ],
      CTX,
    ).normalized.calls[0]!;
    expect([c.contextWindow, c.windowSource, c.agentVersion]).toEqual([1_000_000, 'assumed', null]);
  });
});
