/**
 * Claude Code's tools as the model saw them (also inside Claude Agent SDK apps, which run the
 * same CLI: ../shared/agents.md, measured on SDK 0.3.336 / CLI 2.1.336).
 *
 * - **Names.** The `tool_result` and `tool_decision` log events call every MCP tool `mcp_tool`;
 *   the real name is on the `claude_code.tool` span (`tool_name` = `mcp__<server>__<tool>`; its
 *   `gen_ai.tool.name` is the bare tool) and, in the logs, only inside `tool_parameters`
 *   (`{"mcp_server_name":"logs","mcp_tool_name":"fetch_logs"}`, with `OTEL_LOG_TOOL_DETAILS=1`).
 *   {@link claudeCodeToolName} rebuilds the name Claude Code gives the tool.
 * - **Persisted results.** A result larger than the tool's persistence threshold (the bundled CLI:
 *   `min(tool.maxResultSizeChars, 50,000)` characters; Read never) is written to
 *   `<config>/projects/<p>/<session>/tool-results/<tool_use_id>.json` and the model gets a
 *   `<persisted-output>` block with a 2,000-character preview instead (measured: 2,338
 *   characters for a 75,507-byte MCP result; a 36,747-byte one stayed inline). The log's
 *   `tool_result_size_bytes` is still the raw size and nothing in the logs or spans marks the
 *   persistence, so {@link modelSeenBytes} applies the threshold.
 */
import type { Attributes } from '../model/telemetry.ts';
import { isObj, json, str } from './attrs.ts';

/** What the logs call every MCP tool. */
export const LOGGED_MCP_TOOL = 'mcp_tool';

/** Claude Code's MCP name part: anything but letters, digits, `_` and `-` becomes `_`. */
const mcpPart = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_');

/** `mcp__<server>__<tool>`, as Claude Code names an MCP tool. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${mcpPart(server)}__${mcpPart(tool)}`;
}

/**
 * The tool's name as Claude Code gives it to the model: `tool_name`, except that the logs'
 * `mcp_tool` is rebuilt from `tool_parameters` when it names the server and tool.
 */
export function claudeCodeToolName(a: Attributes): string | null {
  const name = str(a, 'tool_name');
  if (name !== null && name !== LOGGED_MCP_TOOL) return name;
  const params = json(a['tool_parameters']);
  if (isObj(params)) {
    const server = params.mcp_server_name;
    const tool = params.mcp_tool_name;
    if (typeof server === 'string' && server !== '' && typeof tool === 'string' && tool !== '')
      return mcpToolName(server, tool);
  }
  const server = str(a, 'mcp_server.name');
  const tool = str(a, 'mcp_tool.name');
  if (name === LOGGED_MCP_TOOL && server !== null && tool !== null)
    return mcpToolName(server, tool);
  return name;
}

/** Results over this many characters are persisted to a file (the bundled CLI's default cap). */
export const PERSIST_THRESHOLD_CHARS = 50_000;

/** What the model gets instead: the `<persisted-output>` block (2,000-character preview, the path). */
export const PERSISTED_PREVIEW_BYTES = 2_350;

/** Tools whose results are never persisted (their threshold is infinite: Read caps itself). */
const NEVER_PERSISTED: ReadonlySet<string> = new Set(['Read', 'NotebookRead']);

/**
 * The bytes of a logged tool result that reached the model: the raw size, or the preview's for
 * a result Claude Code persisted to a file.
 */
export function modelSeenBytes(toolName: string | null, rawBytes: number | null): number | null {
  if (rawBytes === null) return null;
  if (toolName !== null && NEVER_PERSISTED.has(toolName)) return rawBytes;
  return rawBytes > PERSIST_THRESHOLD_CHARS ? PERSISTED_PREVIEW_BYTES : rawBytes;
}
