/**
 * Scenarios for a small app on the real Claude Agent SDK (0.3.336, bundling Claude Code 2.1.336):
 * what the fake Messages API answers (test/helpers/fake-anthropic.ts), what the app is built with
 * (sub-agents in `options.agents`, an in-process MCP server) and asked (one `query()`, or a second
 * one resuming the session), the findings rotscope must settle on from the telemetry, exactly,
 * and what the stored conversation must hold. Token numbers are what the fake reports
 * (`estimate`: request bytes / 4, warm cache). Measured facts: ../shared/agents.md.
 *
 * - MCP tools: the logs name every MCP tool `mcp_tool`; rotscope names it as Claude Code does,
 *   `mcp__<server>__<tool>` (src/ingest/claude-tools.ts).
 * - A result over 50,000 characters is persisted to a file and the model sees a 2 KB preview:
 *   counted at that, not at the raw `tool_result_size_bytes` (no false takeover).
 * - A tool call cut at `max_tokens` leaves no tool span nor log: a warning, as a cut text is.
 * - Auto-compaction fires on the call after one reporting over ~167,000 tokens (200k window).
 * - A sub-agent from `options.agents` runs in the background (`query_source` `agent:custom`) in
 *   its own stream; when it finishes the main thread makes one more call (routed by its
 *   `<task-notification>`).
 */
import type { AgentSdkApp } from '../../helpers/claude-agent-sdk.ts';
import type { FakeAnswer, FakeScript, FakeUsage } from '../../helpers/fake-anthropic.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

/** What the stored conversation holds, as compared. */
export interface Stored {
  /** Main-thread calls (no side call, no sub-agent). */
  mainCalls: number;
  /** Calls of sub-agents, by agent stream count. */
  subAgentCalls: number;
  /** Sub-agent streams. */
  subAgents: number;
  /** The side-call reasons, sorted. */
  sideCalls: string[];
  /** Compactions: `evidence/kind`, in time order. */
  compactions: string[];
}

export interface Scenario {
  id: string;
  name: string;
  app: AgentSdkApp;
  files?: Record<string, string>;
  script: FakeScript;
  runs: Array<{ prompt: string; resume?: boolean }>;
  /** The findings from telemetry, exactly. */
  findings: Seen[];
  stored: Stored;
  /** What `/api/coverage` then says of Claude Code's output_cut_off (a part of its hint). */
  cutCoverage?: string;
}

const f = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });

/** Usage of one answer whose context is `context` tokens, with a warm cache. */
const usage = (context: number, output = 40): FakeUsage => ({
  input_tokens: 8,
  cache_read_input_tokens: context - 1_008,
  cache_creation_input_tokens: 1_000,
  output_tokens: output,
});
const estimate: FakeUsage = { estimate: true };

const bash = (command: string, u: FakeUsage): FakeAnswer => ({
  toolUse: { name: 'Bash', input: { command, description: command } },
  usage: u,
});
const mcp = (tool: string, u: FakeUsage = estimate): FakeAnswer => ({
  toolUse: { name: `mcp__logs__${tool}`, input: { query: 'errors' } },
  usage: u,
});

const NOTES = 'TODO\n- rotate the API keys\n- fix the flaky billing test\n';
const MODEL = 'claude-sonnet-4-6';
const TOOLS = ['Bash', 'Read', 'Write'];

const AGENTS = {
  'log-checker': {
    description: 'Checks the logs of the project',
    prompt: 'You check logs and report problems.',
    tools: ['Bash'],
  },
};

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy-subagent-resumed',
    name: 'a healthy session with a sub-agent defined in code (its own stream), resumed by a second query()',
    app: { model: MODEL, allowedTools: [...TOOLS, 'Agent'], agents: AGENTS },
    files: { 'notes.txt': NOTES },
    runs: [
      { prompt: 'Check the logs with the log-checker agent.' },
      { prompt: 'Anything else?', resume: true },
    ],
    script: {
      routes: [
        { queue: 'sub', firstUserIncludes: 'SUBTASK-LOGS' },
        { queue: 'notified', lastUserIncludes: '<task-notification>' },
      ],
      queues: {
        sub: [bash('tail app.log', usage(8_000)), { text: 'No errors.', usage: usage(8_300) }],
        notified: [{ text: 'The log-checker found no errors.', usage: usage(21_600) }],
      },
      main: [
        {
          toolUse: {
            name: 'Agent',
            input: {
              description: 'Check logs',
              prompt: 'SUBTASK-LOGS: check the logs and report.',
              subagent_type: 'log-checker',
            },
          },
          usage: usage(21_000),
        },
        { text: 'The log-checker is running.', usage: usage(21_300) },
        { text: 'Nothing else is pending.', usage: usage(22_100) },
      ],
    },
    findings: [],
    // main: the Agent call, its answer, the call after the agent's notification, the resumed one
    stored: { mainCalls: 4, subAgentCalls: 2, subAgents: 1, sideCalls: [], compactions: [] },
  },
  {
    id: 'cut-near-full',
    name: 'a text and a tool call cut at max_tokens (nothing exported for the cut tool call), then near the 200k window',
    app: { model: MODEL, allowedTools: TOOLS },
    runs: [{ prompt: 'Write a long report to report.md, then look around.' }],
    script: {
      main: [
        {
          label: 'text cut',
          text: 'Here is the start of a very long report about the repository that goes on',
          stopReason: 'max_tokens',
          usage: usage(24_000, 32_000),
        },
        {
          label: 'tool call cut',
          toolUse: {
            name: 'Write',
            input: { file_path: '__WORK__/report.md', content: 'The report.'.repeat(50) },
            truncateJsonAt: 40,
          },
          stopReason: 'max_tokens',
          usage: usage(25_000, 32_000),
        },
        bash('ls', usage(60_000)),
        // 75% of 200k, under the auto-compaction point (~167,000)
        bash('pwd', usage(150_000)),
        { label: 'end', text: 'I could not finish the report.', usage: usage(151_000) },
      ],
    },
    findings: [
      f('output_cut_off', 'warning'),
      f('output_cut_off', 'warning'),
      f('context_too_full', 'warning'),
    ],
    stored: { mainCalls: 5, subAgentCalls: 0, subAgents: 0, sideCalls: [], compactions: [] },
    cutCoverage:
      '2 responses cut at the output limit: Claude Code (and the Claude Agent SDK, which runs it) exports nothing for a tool call cut there',
  },
  {
    id: 'mcp-persisted-takeover',
    name: 'custom MCP tools: 75 KB results persisted to files (2 KB previews: no takeover), then 36 KB ones that take over (mcp__logs__fetch_logs)',
    app: {
      model: MODEL,
      allowedTools: [...TOOLS, 'mcp__logs__fetch_big', 'mcp__logs__fetch_logs'],
      mcpTools: [
        { server: 'logs', name: 'fetch_big', resultBytes: 75_000 },
        { server: 'logs', name: 'fetch_logs', resultBytes: 36_000 },
      ],
    },
    runs: [{ prompt: 'Fetch the big logs, then the logs.' }],
    script: {
      main: [
        mcp('fetch_big'),
        mcp('fetch_big'),
        mcp('fetch_big'),
        mcp('fetch_logs'),
        mcp('fetch_logs'),
        mcp('fetch_logs'),
        { text: 'The logs repeat.', usage: estimate },
      ],
    },
    findings: [f('tool_takeover', 'warning', null, 'mcp__logs__fetch_logs')],
    stored: { mainCalls: 7, subAgentCalls: 0, subAgents: 0, sideCalls: [], compactions: [] },
  },
  {
    id: 'auto-compaction',
    name: 'its auto-compaction on the 200k window (a compact side call and the compaction event)',
    app: { model: MODEL, allowedTools: TOOLS },
    runs: [{ prompt: 'Inspect the project step by step.' }],
    script: {
      main: [
        bash('ls', usage(40_000)),
        bash('pwd', usage(120_000)),
        bash('date', usage(172_000)),
        { label: 'after compaction', text: 'Inspected.', usage: usage(14_000) },
      ],
    },
    findings: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
    stored: {
      mainCalls: 4,
      subAgentCalls: 0,
      subAgents: 0,
      sideCalls: ['compact'],
      compactions: ['claude_code_event/summarize'],
    },
  },
];
