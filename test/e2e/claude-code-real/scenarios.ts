/**
 * Scenarios for the real Claude Code CLI: what the fake model answers, what the CLI is asked,
 * and the findings rotscope must settle on, from telemetry and from the transcript. Token
 * numbers are what the fake reports; `estimate` derives them from the real request size.
 *
 * Every scenario runs on every verified version (versions.json) and expects the same findings
 * there: a script answers what any of them asks. Where the versions differ (conventions §5.0.1):
 * 2.1.332's default model is `claude-opus-5-5` (1M, no `[1m]`); it sends no `HEAD /`, offers 14
 * tools up front (the rest through ToolSearch), runs the Agent tool in the background (a second
 * interaction with one more main-thread call when the agent finishes: routed by its
 * `<task-notification>`), and answers a re-read of an unchanged file with the whole file again
 * (2.1.197: a short "unchanged" stub).
 */
import type { SessionOptions } from '../../helpers/claude-code-cli.ts';
import type { FakeScript, FakeUsage } from '../../helpers/fake-anthropic.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

export interface Scenario {
  /** A short stable name: the fixture folder of `npm run capture:claude-code`. */
  id: string;
  name: string;
  options: Omit<SessionOptions, 'binary' | 'otlpUrl' | 'script'>;
  script: FakeScript;
  runs: Array<{ prompt: string; resume?: boolean }>;
  /** The findings from telemetry, exactly. */
  telemetry: Seen[];
  /** The findings from the transcript where they cannot be the telemetry's, and why. */
  transcript?: { findings: Seen[]; because: string };
}

export const seenFinding = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });
const f = seenFinding;

/** Usage of one answer whose context is `context` tokens, with a warm cache. */
const usage = (context: number, output = 40): FakeUsage => ({
  input_tokens: 8,
  cache_read_input_tokens: context - 1_008,
  cache_creation_input_tokens: 1_000,
  output_tokens: output,
});
const estimate: FakeUsage = { estimate: true };

/** About `kb` KB of numbered log lines. */
export function bigText(label: string, kb: number): string {
  const lines = Math.ceil((kb * 1024) / 100);
  return Array.from({ length: lines }, (_, i) =>
    `${label} ${String(i).padStart(5, '0')}: ${'lorem ipsum dolor sit amet '.repeat(4)}`.slice(
      0,
      99,
    ),
  ).join('\n');
}

const NOTES = 'TODO\n- rotate the API keys\n- fix the flaky billing test\n';

/** The same cut-off session, read with and without detailed beta tracing. */
function cutOff(beta: boolean): Scenario {
  return {
    id: beta ? 'cut-beta' : 'cut-plain',
    name: `a text and a tool call cut at max_tokens (${beta ? 'detailed beta tracing' : 'plain telemetry'})`,
    options: { model: 'claude-sonnet-4-6', betaTracing: beta },
    runs: [{ prompt: 'Write a long report to report.md.' }],
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
        { label: 'end', text: 'I could not finish the report.', usage: usage(25_500) },
      ],
    },
    telemetry: beta
      ? [f('output_cut_off', 'warning'), f('output_cut_off', 'critical')]
      : [f('output_cut_off', 'warning'), f('output_cut_off', 'warning')],
    transcript: {
      findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'critical', null, 'Write')],
      because: beta
        ? "beta tracing's response.has_tool_call says a tool call was cut, not which tool; the transcript holds the cut tool_use block"
        : 'plain telemetry does not say whether the cut output was a tool call (the span has only stop_reason); the transcript holds the cut tool_use block',
    },
  };
}

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy',
    name: 'a healthy session (protobuf exporter, default 1M model)',
    options: { protocol: 'http/protobuf', files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Read notes.txt and summarise it.' }],
    script: {
      main: [
        {
          toolUse: { name: 'Bash', input: { command: 'ls', description: 'List files' } },
          usage: usage(21_000),
        },
        {
          toolUse: { name: 'Read', input: { file_path: '__WORK__/notes.txt' } },
          usage: usage(21_600),
        },
        { text: 'Two tasks: rotate the keys and fix the test.', usage: usage(22_100) },
      ],
    },
    telemetry: [],
  },
  {
    id: 'compaction',
    name: 'automatic compaction on a 200k model, then /compact on resume',
    options: { model: 'claude-sonnet-4-6', files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Inspect the project step by step.' }, { prompt: '/compact', resume: true }],
    script: {
      main: [
        {
          toolUse: { name: 'Bash', input: { command: 'ls', description: 'List' } },
          usage: usage(40_000),
        },
        {
          toolUse: { name: 'Bash', input: { command: 'pwd', description: 'Where' } },
          usage: usage(90_000),
        },
        {
          toolUse: { name: 'Read', input: { file_path: '__WORK__/notes.txt' } },
          usage: usage(140_000),
        },
        {
          toolUse: { name: 'Bash', input: { command: 'date', description: 'Date' } },
          usage: usage(172_000),
        },
        { label: 'after compaction', text: 'Inspected.', usage: usage(14_000) },
      ],
    },
    telemetry: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
  },
  {
    id: 'overflow',
    name: 'a "prompt is too long" 400, then reactive compaction',
    options: { model: 'claude-sonnet-4-5', protocol: 'http/protobuf' },
    runs: [{ prompt: 'Run the six steps.' }],
    script: {
      main: [
        // Claude Code compacts reactively only when there is an older part to summarise
        ...[30_000, 55_000, 80_000, 105_000, 130_000, 155_000].map((context, i) => ({
          toolUse: { name: 'Bash', input: { command: `echo step ${i}`, description: `Step ${i}` } },
          usage: usage(context),
        })),
        {
          label: 'overflow',
          error: { status: 400, message: 'prompt is too long: 212000 tokens > 200000 maximum' },
        },
        { label: 'retry', text: 'All steps ran.', usage: usage(12_000) },
      ],
    },
    telemetry: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
    transcript: {
      findings: [f('context_too_full', 'warning'), f('history_lost', 'info', 'compacted')],
      because:
        'the transcript has no line for the request that failed with "prompt is too long" (77% full at most)',
    },
  },
  cutOff(false),
  cutOff(true),
  {
    id: 'large-results',
    name: 'large Read and Bash results that stay in context',
    options: {
      files: {
        'big1.txt': bigText('alpha', 80),
        'big2.txt': bigText('beta', 80),
        'app.log': bigText('INFO', 24),
      },
    },
    runs: [{ prompt: 'Read big1.txt and big2.txt, then check app.log.' }],
    script: {
      main: [
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/big1.txt' } }, usage: estimate },
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/big2.txt' } }, usage: estimate },
        {
          toolUse: { name: 'Bash', input: { command: 'cat app.log', description: 'Show the log' } },
          usage: estimate,
        },
        {
          toolUse: { name: 'Bash', input: { command: 'wc -l app.log', description: 'Count' } },
          usage: estimate,
        },
        { text: 'Both files are logs of lorem ipsum.', usage: estimate },
      ],
    },
    telemetry: [f('tool_takeover', 'warning', null, 'Read')],
  },
  {
    id: 're-read',
    name: 'a re-read of an unchanged file (a stub on 2.1.197, the whole file again on 2.1.332)',
    options: { files: { 'schema.sql': bigText('CREATE TABLE', 48) } },
    runs: [{ prompt: 'Read schema.sql, read it once more to be sure, then count its lines.' }],
    script: {
      main: [
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/schema.sql' } }, usage: estimate },
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/schema.sql' } }, usage: estimate },
        {
          toolUse: { name: 'Bash', input: { command: 'wc -l schema.sql', description: 'Count' } },
          usage: estimate,
        },
        { text: 'schema.sql holds one table definition per line.', usage: estimate },
      ],
    },
    // the first Read alone is over a third of the input on both versions, and stays there
    telemetry: [f('tool_takeover', 'warning', null, 'Read')],
  },
  {
    id: 'subagent',
    name: 'a sub-agent is its own stream (in the background on 2.1.332)',
    options: { files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Use a sub-agent to count the lines of notes.txt.' }],
    script: {
      routes: [
        { queue: 'sub', firstUserIncludes: 'SUBTASK-7' },
        // 2.1.332: the main thread's extra call once the background agent has finished
        { queue: 'notified', lastUserIncludes: '<task-notification>' },
      ],
      queues: {
        sub: [
          {
            toolUse: { name: 'Bash', input: { command: 'wc -l notes.txt', description: 'Count' } },
            usage: usage(8_000),
          },
          { text: 'notes.txt has 3 lines.', usage: usage(8_300) },
        ],
        notified: [{ text: 'The sub-agent counted 3 lines in notes.txt.', usage: usage(41_000) }],
      },
      main: [
        {
          toolUse: {
            name: 'Agent',
            input: {
              description: 'Count lines',
              prompt: 'SUBTASK-7: count the lines of notes.txt and report the number.',
              subagent_type: 'general-purpose',
            },
          },
          usage: usage(40_000),
        },
        { text: 'notes.txt has 3 lines.', usage: usage(40_600) },
      ],
    },
    telemetry: [],
  },
];
