/**
 * Advice in the producer's words (issue 23 §5): a coding agent's user is told the agent's own
 * knob; a library's user keeps the generic advice that names attributes.
 */
import { describe, expect, it } from 'vitest';
import { agentOf, coverageHint, cutOffAdvice } from '../../../src/model/producer-advice.ts';

describe('producer advice', () => {
  it('knows the agent behind every producer id of the three coding agents', () => {
    expect(['claude_code', 'claude_code_log', 'claude_code_transcript'].map(agentOf)).toEqual([
      'claude_code',
      'claude_code',
      'claude_code',
    ]);
    expect(agentOf('codex_session')).toBe('codex');
    expect(agentOf('gemini_cli')).toBe('gemini_cli');
    expect(agentOf('langfuse')).toBeUndefined();
    expect(agentOf(null)).toBeUndefined();
  });

  it("tells a Claude Code user how to raise Claude Code's output limit", () => {
    for (const producer of ['claude_code', 'claude_code_log', 'claude_code_transcript'])
      for (const tool of [true, false])
        expect(cutOffAdvice(producer, tool)).toContain('CLAUDE_CODE_MAX_OUTPUT_TOKENS');
    expect(cutOffAdvice('langfuse', false)).toBe(
      'raise the output limit (max tokens), or ask for a shorter answer',
    );
    expect(cutOffAdvice('codex', true)).toContain('Codex');
  });

  it('gives each agent its own coverage hints and none to a library', () => {
    for (const detector of [
      'context_too_full',
      'tool_takeover',
      'history_lost',
      'output_cut_off',
    ] as const) {
      expect(coverageHint('claude_code', detector)).toContain('rotscope claude-code install');
      expect(coverageHint('codex', detector)).toMatch(/rotscope (codex install|import)/);
      expect(coverageHint('gemini_cli', detector)).toContain('rotscope gemini install');
      expect(coverageHint('openinference', detector)).toBeUndefined();
    }
    expect(coverageHint('codex', 'output_cut_off')).toContain('~/.codex/sessions');
  });
});
