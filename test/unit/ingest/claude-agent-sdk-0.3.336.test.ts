/**
 * Claude Code's tools as the model saw them (src/ingest/claude-tools.ts), from what a real
 * Claude Agent SDK 0.3.336 app exported (its Claude Code 2.1.336; test/fixtures/real/
 * claude-agent-sdk-0.3.336/PROVENANCE.md): an MCP tool is named `mcp__<server>__<tool>` from the
 * logs' `tool_parameters` and from the span's `tool_name` (not `mcp_tool`, not the bare
 * `gen_ai.tool.name`), and a result Claude Code persisted to a file counts at its preview.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeCodeToolName,
  mcpToolName,
  modelSeenBytes,
  PERSISTED_PREVIEW_BYTES,
} from '../../../src/ingest/claude-tools.ts';
import { normalizeLogs, normalizeSpans } from '../../../src/ingest/index.ts';
import { CTX, capturedOtlp } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/claude-agent-sdk-0.3.336');

describe('Claude Agent SDK 0.3.336 (Claude Code 2.1.336), captured', () => {
  const { spans, logs } = capturedOtlp(join(DIR, 'mcp-persisted'));

  it('the logs call both MCP tools mcp_tool; rotscope names them as Claude Code does', () => {
    const raw = logs.filter((l) => l.attributes['event.name'] === 'tool_result');
    expect(raw.map((l) => l.attributes['tool_name'])).toEqual(['mcp_tool', 'mcp_tool']);
    const results = normalizeLogs(logs, CTX).normalized.toolResults;
    expect(results.map((r) => r.toolName)).toEqual([
      'mcp__logs__fetch_logs',
      'mcp__logs__fetch_big',
    ]);
  });

  it('a 36 KB result stays at its size; a 74 KB one, persisted, counts at the 2 KB preview', () => {
    const raw = logs.filter((l) => l.attributes['event.name'] === 'tool_result');
    expect(raw.map((l) => Number(l.attributes['tool_result_size_bytes']))).toEqual([
      36_747, 75_507,
    ]);
    const results = normalizeLogs(logs, CTX).normalized.toolResults;
    expect(results.map((r) => r.resultSize)).toEqual([36_747, PERSISTED_PREVIEW_BYTES]);
  });

  it("the tool spans' results carry the mcp__ name, not gen_ai.tool.name's bare one", () => {
    const tools = spans.filter((s) => s.name === 'claude_code.tool');
    expect(tools.map((s) => s.attributes['gen_ai.tool.name'])).toEqual(['fetch_logs', 'fetch_big']);
    const results = normalizeSpans(spans, CTX).normalized.toolResults;
    expect(results.map((r) => r.toolName).sort()).toEqual([
      'mcp__logs__fetch_big',
      'mcp__logs__fetch_logs',
    ]);
  });
});

describe('claudeCodeToolName and modelSeenBytes', () => {
  it('rebuilds an MCP name from tool_parameters, else from mcp_server.name / mcp_tool.name', () => {
    expect(
      claudeCodeToolName({
        tool_name: 'mcp_tool',
        tool_parameters: '{"mcp_server_name":"my server","mcp_tool_name":"get.logs"}',
      }),
    ).toBe('mcp__my_server__get_logs');
    expect(
      claudeCodeToolName({
        tool_name: 'mcp_tool',
        'mcp_server.name': 'logs',
        'mcp_tool.name': 'fetch',
      }),
    ).toBe('mcp__logs__fetch');
    // without the details (OTEL_LOG_TOOL_DETAILS off) the log's name stays; the span's wins in the store
    expect(claudeCodeToolName({ tool_name: 'mcp_tool' })).toBe('mcp_tool');
    expect(claudeCodeToolName({ tool_name: 'Bash', tool_parameters: '{"x":1}' })).toBe('Bash');
    expect(mcpToolName('a-b', 'c_d')).toBe('mcp__a-b__c_d');
  });

  it('counts a result over 50,000 characters at the preview, except Read (never persisted)', () => {
    expect(modelSeenBytes('mcp__logs__fetch', 50_000)).toBe(50_000);
    expect(modelSeenBytes('mcp__logs__fetch', 50_001)).toBe(PERSISTED_PREVIEW_BYTES);
    expect(modelSeenBytes('Grep', 90_000)).toBe(PERSISTED_PREVIEW_BYTES);
    expect(modelSeenBytes('Read', 90_000)).toBe(90_000);
    expect(modelSeenBytes('Bash', null)).toBeNull();
  });
});
