/** The merge rules of one call, one row and one compaction, one row (src/receiver/merge-rules.ts). */
import { describe, expect, it } from 'vitest';
import type { Compaction } from '../../../src/model/calls.ts';
import {
  fillFromImport,
  importedOf,
  isImportedParts,
  mergeCompaction,
  readImported,
  sameCompaction,
  sortSources,
  sourceOf,
} from '../../../src/receiver/merge-rules.ts';
import { call } from '../../helpers/calls.ts';

const S = 1_000_000_000n;
const at = (seconds: number) => String(1_800_000_000n * S + BigInt(seconds * 1000) * 1_000_000n);

function compaction(over: Partial<Compaction>): Compaction {
  return {
    workspaceId: 'ws',
    conversationId: 'session',
    streamKey: 'session|main',
    runId: 'session',
    traceId: null,
    spanId: null,
    atNs: at(0),
    evidence: 'claude_code_event',
    kind: 'summarize',
    trigger: 'manual',
    tokensBefore: null,
    tokensAfter: null,
    messagesKept: null,
    summarySize: null,
    summary: null,
    sourceKey: 'k',
    ...over,
  };
}

describe('fillFromImport', () => {
  const span = call('s', 1, {
    producer: 'claude_code',
    finishReasonRaw: 'max_tokens',
    finishClass: 'output_limit',
    outputToolCall: null,
    contextTokens: 13_800,
  });
  const line = call('s', 1.3, {
    producer: 'claude_code_transcript',
    finishReasonRaw: 'max_tokens',
    finishClass: 'output_limit',
    outputToolCall: true,
    outputToolName: 'Write',
    contextTokens: 13_800,
    parts: {
      unit: 'tokens',
      total: null,
      system: null,
      tools: { Read: 5000 },
      source: 'estimated',
    },
  });

  it('keeps what telemetry says and adds what only the import knew: the cut tool call', () => {
    const merged = fillFromImport(span, importedOf(line), false);
    expect(merged).toEqual({ ...span, outputToolCall: true, outputToolName: 'Write' });
  });

  it("uses the import's estimated parts only where telemetry sizes nothing", () => {
    expect(fillFromImport(span, importedOf(line), true).parts).toEqual(line.parts);
    expect(fillFromImport(span, importedOf(line), false).parts).toBeNull();
    const sized = { ...span, parts: { ...line.parts!, source: 'tool_spans' as const } };
    expect(fillFromImport(sized, importedOf(line), true).parts).toEqual(sized.parts);
  });

  it('takes token counts and finish reasons as groups, never mixed', () => {
    const failed = { ...span, contextTokens: null, inputTokensRaw: null, usageRule: null };
    const merged = fillFromImport(failed, importedOf(line), false);
    expect([merged.contextTokens, merged.inputTokensRaw, merged.usageRule]).toEqual([
      line.contextTokens,
      line.inputTokensRaw,
      line.usageRule,
    ]);
    const fromLogs = { ...span, finishReasonRaw: null, finishClass: null };
    expect(fillFromImport(fromLogs, importedOf(line), false).finishClass).toBe('output_limit');
  });

  it('reads back what it stored, and knows its own parts', () => {
    const stored = readImported(JSON.parse(JSON.stringify(importedOf(line))));
    expect(stored).toEqual(importedOf(line));
    expect(isImportedParts(line.parts, stored)).toBe(true);
    expect(isImportedParts({ ...line.parts!, source: 'tool_spans' }, stored)).toBe(false);
    expect(readImported(null)).toBeNull();
  });
});

describe('one compaction from several sources', () => {
  // what the real CLI 2.1.332 reported of one `/compact` after --resume (fixture claude-code-one-session)
  const event = compaction({
    evidence: 'claude_code_event',
    atNs: at(6.3),
    tokensBefore: 3047,
    tokensAfter: 2787,
    sourceKey: 'log',
  });
  const hook = compaction({
    evidence: 'span',
    atNs: at(4.3),
    tokensBefore: 14_000,
    tokensAfter: 2882,
    summarySize: 1515,
    traceId: 't',
    spanId: 's',
    sourceKey: 'span',
  });
  const boundary = compaction({
    evidence: 'transcript_boundary',
    atNs: at(2.9),
    tokensBefore: 14_040,
    messagesKept: 3,
    summarySize: 584,
    sourceKey: 'transcript',
  });

  it('are the same compaction when the triggers agree, whatever their tokens before say', () => {
    expect(sameCompaction([sourceOf(event)], boundary)).toBe(true);
    expect(sameCompaction([sourceOf(event), sourceOf(boundary)], hook)).toBe(true);
  });

  it('are not: another trigger, the same evidence twice, another stream, or too far apart', () => {
    expect(sameCompaction([sourceOf(event)], { ...boundary, trigger: 'auto' })).toBe(false);
    expect(sameCompaction([sourceOf(event)], { ...event, sourceKey: 'log2', atNs: at(8) })).toBe(
      false,
    );
    expect(sameCompaction([sourceOf(event)], { ...boundary, streamKey: 'session|agent-1' })).toBe(
      false,
    );
    expect(sameCompaction([sourceOf(event)], { ...boundary, atNs: at(40) })).toBe(false);
  });

  it('without a trigger, tokens before decide', () => {
    const untriggered = { ...hook, trigger: null };
    expect(sameCompaction([sourceOf({ ...boundary })], untriggered)).toBe(true);
    expect(sameCompaction([sourceOf({ ...boundary, tokensBefore: 3047 })], untriggered)).toBe(
      false,
    );
  });

  it('merge the same way in any order: the earliest time, history sizes from the transcript', () => {
    const where = { workspaceId: 'ws', conversationId: 'session' };
    const orders = [
      [event, hook, boundary],
      [boundary, hook, event],
      [hook, event, boundary],
    ];
    const merged = orders.map((o) => mergeCompaction(sortSources(o.map(sourceOf)), where));
    for (const m of merged) expect(m).toEqual(merged[0]);
    expect(merged[0]).toMatchObject({
      evidence: 'claude_code_event',
      sourceKey: 'log',
      atNs: boundary.atNs,
      trigger: 'manual',
      tokensBefore: 14_040,
      tokensAfter: 2787,
      messagesKept: 3,
      summarySize: 584,
      traceId: 't',
      spanId: 's',
    });
  });
});
