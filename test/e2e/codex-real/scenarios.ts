/**
 * Scenarios for the real Codex CLI 0.171.0 (test/e2e/codex-real): what the fake Responses API
 * answers, what Codex is asked (one `codex exec` per run, later runs `codex exec resume`), and
 * the findings rotscope must settle on, from telemetry and from Codex's session files. Token
 * numbers are what the fake reports (`estimate`: request bytes / 4, the previous request's
 * estimate cached); gpt-5.5's window is 272,000 in the catalog, and Codex's session files
 * report 258,400 of it as usable (`model_context_window`).
 *
 * What 0.171.0 does, measured (conventions §5.0.2 and test/fixtures/real/codex-0.171.0):
 * - it compacts automatically in the middle of a turn once a response reports ≥ 244,800 input
 *   tokens (90% of 272,000), before the next request;
 * - a response cut at `max_output_tokens` fails the turn (no retry) and `codex exec` exits 1
 *   without flushing its telemetry: nothing of that run reaches rotscope, while the session
 *   file records the response's usage and the error;
 * - shell output is truncated to 10,000 tokens for the model (about 40 KB).
 */
import type {
  FakeResponsesScript,
  FakeResponsesUsage,
} from '../../helpers/fake-openai-responses.ts';
import type { CodexSessionOptions } from '../../helpers/codex-cli.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

export interface CodexScenario {
  /** A short stable name (the fixture folder of test/e2e/codex-real/capture.ts). */
  id: string;
  name: string;
  options: Omit<CodexSessionOptions, 'binary' | 'otlpUrl' | 'script'>;
  script: FakeResponsesScript;
  /** `exit`: the exit code `codex exec` must end with (default 0). */
  runs: Array<{ prompt: string; resume?: boolean; exit?: number }>;
  /** The calls telemetry brings for the session (every completed response of the runs that exit 0). */
  telemetryCalls: number;
  /** The findings from telemetry, exactly. */
  telemetry: Seen[];
  /** The findings from the session file where they cannot be the telemetry's, and why. */
  sessionFile?: { findings: Seen[]; because: string };
}

const f = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });

/** Usage of a response whose input is `input` tokens, all but 1,000 of them cached. */
const usage = (input: number, output = 40): FakeResponsesUsage => ({
  input_tokens: input,
  cached_tokens: input - 1_000,
  output_tokens: output,
});
const estimate: FakeResponsesUsage = { estimate: true };

const shell = (cmd: string) => ({ name: 'exec_command', arguments: { cmd } });

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

export const CODEX_SCENARIOS: CodexScenario[] = [
  {
    id: 'healthy',
    name: 'a healthy session (OTLP/HTTP JSON)',
    options: { protocol: 'json', files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Read notes.txt and summarise it.' }],
    script: {
      main: [
        { call: shell('cat notes.txt'), usage: estimate },
        { text: 'Two tasks: rotate the keys and fix the test.', usage: estimate },
      ],
    },
    telemetryCalls: 2,
    telemetry: [],
  },
  {
    id: 'near-window',
    name: "a session at 90% of gpt-5.5's window",
    options: {},
    runs: [{ prompt: 'Inspect the big repository.' }],
    script: {
      main: [
        { call: shell('ls'), usage: usage(150_000) },
        // 244,800 = 90% of 272,000; the turn ends here, so Codex does not compact
        { text: 'Inspected.', usage: usage(244_800) },
      ],
    },
    telemetryCalls: 2,
    telemetry: [f('context_too_full', 'critical')],
  },
  {
    id: 'tool-takeover',
    name: "one tool's results take over the input (huge shell output)",
    options: { files: { 'app.log': bigText('INFO', 400) } },
    runs: [{ prompt: 'Show app.log twice, then count its lines.' }],
    script: {
      main: [
        { call: shell('cat app.log'), usage: estimate },
        { call: shell('cat app.log'), usage: estimate },
        { call: shell('wc -l app.log'), usage: estimate },
        { text: 'app.log has 4,096 lines of lorem ipsum.', usage: estimate },
      ],
    },
    telemetryCalls: 4,
    // each 410 KB result reaches the model truncated to ~10k tokens: half the input, then two thirds
    telemetry: [f('tool_takeover', 'warning', null, 'exec_command')],
  },
  {
    id: 'cut-off',
    name: 'a text and a tool call cut at max_output_tokens (resumed runs)',
    options: { files: { 'notes.txt': NOTES } },
    runs: [
      { prompt: 'List the files.' },
      { prompt: 'Write a long report about them.', resume: true, exit: 1 },
      { prompt: 'Write the report to report.md with a command.', resume: true, exit: 1 },
    ],
    script: {
      main: [
        { call: shell('ls'), usage: usage(23_000) },
        { text: 'notes.txt is the only file.', usage: usage(23_500) },
        {
          label: 'text cut',
          text: 'Here is the start of a very long report about the repository that goes on and on',
          incomplete: { cutAt: 60 },
          usage: usage(24_000, 32_000),
        },
        {
          label: 'tool call cut',
          call: shell(`printf '%s' '${'The report. '.repeat(40)}' > report.md`),
          incomplete: { cutAt: 40 },
          usage: usage(25_000, 32_000),
        },
      ],
    },
    // the two failed runs export nothing: only the first run's calls, no finish reason
    telemetryCalls: 2,
    telemetry: [],
    sessionFile: {
      findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'warning')],
      because:
        'Codex telemetry has no finish reason and a failed run exports nothing; the session file records both cut responses, but not their output, so whether one was a tool call is unknown (warning, not critical)',
    },
  },
  {
    id: 'compaction',
    name: 'an automatic compaction in the middle of a turn',
    options: {},
    runs: [{ prompt: 'Inspect the project step by step.' }],
    script: {
      main: [
        { call: shell('ls'), usage: usage(100_000) },
        { call: shell('pwd'), usage: usage(180_000) },
        { call: shell('date'), usage: usage(236_000) },
        { call: shell('echo 1'), usage: usage(250_000) },
        { label: 'after compaction', call: shell('echo 2'), usage: usage(20_000) },
        { text: 'Inspected.', usage: usage(21_000) },
      ],
      compact: [{ text: 'Summary: ran ls, pwd, date and echo.', usage: usage(250_500, 300) }],
    },
    telemetryCalls: 6,
    telemetry: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
  },
  {
    id: 'resumed',
    name: 'a resumed session is the same conversation',
    options: { files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Read notes.txt.' }, { prompt: 'Now count its lines.', resume: true }],
    script: {
      main: [
        { call: shell('cat notes.txt'), usage: usage(21_000) },
        { text: 'It lists two tasks.', usage: usage(21_500) },
        { call: shell('wc -l notes.txt'), usage: usage(22_000) },
        { text: 'Three lines.', usage: usage(22_400) },
      ],
    },
    telemetryCalls: 4,
    telemetry: [],
  },
];
