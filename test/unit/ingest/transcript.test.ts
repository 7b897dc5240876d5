import { describe, expect, it } from 'vitest';
import { normalizeTranscript, transcriptOptionsForPath } from '../../../src/ingest/index.ts';
import { CTX } from './helpers.ts';

const SID = '11111111-2222-3333-4444-555555555555';
let n = 0;
function line(o: Record<string, unknown>): string {
  n++;
  return JSON.stringify({
    sessionId: SID,
    uuid: `u${n}`,
    timestamp: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
    isSidechain: false,
    ...o,
  });
}
const usage = (i: number, r: number, w: number, o = 9) => ({
  input_tokens: i,
  cache_read_input_tokens: r,
  cache_creation_input_tokens: w,
  output_tokens: o,
});
const assistant = (
  id: string,
  block: unknown,
  u = usage(3, 1000, 500),
  extra: Record<string, unknown> = {},
) =>
  line({
    type: 'assistant',
    requestId: `req_${id}`,
    message: {
      id,
      model: 'claude-opus-4-6',
      role: 'assistant',
      content: [block],
      stop_reason: null,
      usage: u,
    },
    ...extra,
  });
const user = (content: unknown, extra: Record<string, unknown> = {}) =>
  line({ type: 'user', message: { role: 'user', content }, ...extra });

describe('normalizeTranscript', () => {
  const text = [
    JSON.stringify({ type: 'summary', summary: 'A title', leafUuid: 'x' }),
    user('please read the file'),
    assistant('msg_1', { type: 'text', text: 'Sure.' }),
    assistant('msg_1', {
      type: 'tool_use',
      id: 'toolu_1',
      name: 'Read',
      input: { file_path: '/a' },
    }),
    user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x'.repeat(500) }]),
    assistant('msg_2', { type: 'text', text: 'Done' }, usage(5, 1500, 700, 40), {}),
    line({
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      compactMetadata: { trigger: 'auto', preTokens: 2205 },
    }),
    user('This session is being continued from a previous conversation...', {
      isCompactSummary: true,
    }),
    assistant('msg_3', { type: 'text', text: 'ok' }, usage(3, 0, 300)),
    line({
      type: 'assistant',
      isSidechain: true,
      agentId: 'a1b2',
      message: {
        id: 'msg_s',
        model: 'claude-opus-4-6',
        content: [{ type: 'text', text: 'sub' }],
        usage: usage(1, 2, 3),
      },
    }),
    'not json',
    '',
  ].join('\n');
  const r = normalizeTranscript(text, CTX);

  it('one call per unique message id, usage once, exclusive rule', () => {
    expect(r.calls.map((c) => [c.requestId, c.contextTokens, c.usageRule])).toEqual([
      ['req_msg_1', 1503, 'exclusive_producer'],
      ['req_msg_2', 2205, 'exclusive_producer'],
      ['req_msg_3', 303, 'exclusive_producer'],
      [null, 6, 'exclusive_producer'],
    ]);
  });
  it('tool call in the output, tool results joined to tool_use names', () => {
    expect(r.calls[0]).toMatchObject({
      outputToolCall: true,
      outputToolName: 'Read',
      finishReasonRaw: null,
      finishClass: null,
    });
    expect(r.toolResults).toEqual([
      expect.objectContaining({
        toolName: 'Read',
        toolCallId: 'toolu_1',
        resultSize: 500,
        sizeUnit: 'chars',
        source: 'claude_code_transcript',
      }),
    ]);
  });
  it('parts: tool results held in tokens, from the usage growth split by characters; compact_boundary resets', () => {
    expect(r.calls[0]?.parts).toEqual({
      unit: 'tokens',
      total: null,
      system: null,
      tools: {},
      source: 'estimated',
    });
    // Between calls 1 and 2 the usage grew 2205 − 1503 = 702 tokens while the history gained
    // the assistant's "Sure." (5), its tool_use input and the 500-character Read result. Its
    // share of the growth (about 666 tokens) is more than 500 characters can hold: the result
    // is credited at most one token per 2 characters (the rest came from what the transcript
    // does not show).
    const toolUse = JSON.stringify({ file_path: '/a' }).length + 'Read'.length;
    const added = 5 + toolUse + 500;
    expect((702 * 500) / added).toBeGreaterThan(250);
    expect(r.calls[1]?.parts?.tools).toEqual({ Read: 250 });
    expect(r.calls[2]?.parts?.tools).toEqual({});
  });
  it('compact_boundary → a compaction (summary is a title, not one)', () => {
    expect(r.compactions).toEqual([
      expect.objectContaining({
        evidence: 'transcript_boundary',
        trigger: 'auto',
        tokensBefore: 2205,
        streamKey: `${SID}|main`,
        summarySize: 63,
      }),
    ]);
  });
  it('sidechain lines are a separate stream; ids are deterministic', () => {
    expect(r.calls[3]).toMatchObject({ agentId: 'a1b2', streamKey: `${SID}|a1b2`, sideCall: null });
    expect(
      r.calls.every((c) => c.runId === SID && c.conversationId === SID && !c.conversationSynthetic),
    ).toBe(true);
    expect(normalizeTranscript(text, CTX)).toEqual(r);
    expect(new Set(r.calls.map((c) => c.traceId)).size).toBe(1);
  });
  it('a subagent file gets the agent id; acompact agents are compaction side calls', () => {
    const sub = normalizeTranscript(assistant('msg_x', { type: 'text', text: 'summary' }), CTX, {
      agentId: 'acompact-e1f845',
    });
    expect(sub.calls[0]).toMatchObject({
      agentId: 'acompact-e1f845',
      sideCall: 'compact',
      streamKey: `${SID}|acompact-e1f845`,
    });
  });
  it('a sidechain without agentId is keyed by its root line', () => {
    const root = line({
      type: 'user',
      isSidechain: true,
      parentUuid: null,
      message: { role: 'user', content: 'task' },
    });
    const rootUuid = (JSON.parse(root) as { uuid: string }).uuid;
    const child = line({
      type: 'assistant',
      isSidechain: true,
      parentUuid: rootUuid,
      message: {
        id: 'msg_c',
        model: 'claude-sonnet-4-20250514',
        content: [{ type: 'text', text: 'x' }],
        usage: usage(1, 1, 1),
      },
    });
    const res = normalizeTranscript([root, child].join('\n'), CTX);
    expect(res.calls[0]?.agentId).toBe(`sidechain-${rootUuid}`);
    expect(res.calls[0]?.parts).toMatchObject({ unit: 'tokens', tools: {} });
  });
  it('stop_reason when present is classed', () => {
    const res = normalizeTranscript(
      assistant('msg_z', { type: 'text', text: 'x' }, usage(1, 1, 1), {}).replace(
        '"stop_reason":null',
        '"stop_reason":"max_tokens"',
      ),
      CTX,
    );
    expect(res.calls[0]).toMatchObject({
      finishReasonRaw: 'max_tokens',
      finishClass: 'output_limit',
    });
  });
});

describe('transcriptOptionsForPath', () => {
  it.each([
    ['/home/u/.claude/projects/-x/4d5611e5.jsonl', { sessionId: '4d5611e5' }],
    [
      '/home/u/.claude/projects/-x/4d5611e5/subagents/agent-acompact-e1f845.jsonl',
      { sessionId: '4d5611e5', agentId: 'acompact-e1f845' },
    ],
    ['C:\\Users\\u\\s1\\subagents\\agent-a1.jsonl', { sessionId: 's1', agentId: 'a1' }],
    ['notes.txt', {}],
  ])('%s', (path, expected) => {
    expect(transcriptOptionsForPath(path)).toEqual(expected);
  });
});
