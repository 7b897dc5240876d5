/**
 * Input parts estimated from sizes in bytes (Claude Code, conventions §5.0): its tool spans
 * carry no size; the `tool_result` log event says how many bytes each result put into the
 * context (`tool_result_size_bytes`), and detailed beta tracing says how long the system prompt
 * is (`system_prompt_length`). Both are turned into estimated tokens, 4 bytes to a token, and
 * labelled so (`estimatedFrom: 'bytes'`).
 */
import type { InputParts } from '../model/calls.ts';

/** Bytes (or characters) of text per token, for estimates. */
export const BYTES_PER_TOKEN = 4;

/** Estimated tokens of `bytes` bytes of text. */
export function tokensFromBytes(bytes: number): number {
  return Math.round(bytes / BYTES_PER_TOKEN);
}

/**
 * The parts of one call from the results logged since its stream's previous call (by tool
 * name, in bytes) and the system prompt's length when known: estimated tokens. Tool-span parts
 * hold only what is new at this call; the detectors hold them until a compaction.
 */
export function partsFromBytes(
  toolBytes: Readonly<Record<string, number>>,
  systemPromptLength: number | null,
): InputParts {
  const tools: Record<string, number> = {};
  for (const [name, bytes] of Object.entries(toolBytes)) tools[name] = tokensFromBytes(bytes);
  return {
    unit: 'tokens',
    total: null,
    system: systemPromptLength === null ? null : tokensFromBytes(systemPromptLength),
    tools,
    source: 'tool_spans',
    estimatedFrom: 'bytes',
  };
}
