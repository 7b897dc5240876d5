/**
 * Scenarios for the real Gemini CLI (0.61.0): what the fake Gemini API answers
 * (test/helpers/fake-gemini.ts), what the CLI is asked (one `-p` run, or several of one session
 * with `--resume latest`), the findings rotscope must settle on from its telemetry, and what the
 * stored conversation must hold (one conversation per session, side calls, compactions, finish
 * reasons). Token numbers are what the fake reports (`estimate`: request bytes / 4).
 *
 * Gemini CLI compresses its history only at the start of a turn, and only when the part before
 * the last user prompt can be summarised: the compression scenario fills the history in one run
 * and resumes the session (`model.compressionThreshold` lowered to 3% of the 1M window so a
 * 240 KB history crosses it).
 */
import type { GeminiSessionOptions } from '../../helpers/gemini-cli.ts';
import type { GeminiAnswer, GeminiScript, GeminiUsage } from '../../helpers/fake-gemini.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

/** What the stored conversation holds, as compared. */
export interface Stored {
  /** Main-thread calls (not side calls), in start order. */
  mainCalls: number;
  /** The side-call reasons, sorted. */
  sideCalls: string[];
  /** Compactions: `evidence/kind`, in time order. */
  compactions: string[];
  /** Finish reasons of the main-thread calls that have one other than `stop`, in order, with `+tool` when the output held a tool call (`?tool` unknown). */
  cuts: string[];
}

export interface Scenario {
  /** A short stable name: its fixture folder. */
  id: string;
  name: string;
  options: Omit<GeminiSessionOptions, 'entry' | 'otlpUrl' | 'script'>;
  script: GeminiScript;
  runs: Array<{ prompt: string; resume?: boolean }>;
  /** The findings from telemetry, exactly. */
  findings: Seen[];
  stored: Stored;
}

const f = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });

const usage = (prompt: number, output = 40) => ({ prompt, output });
const estimate = { estimate: true } as const;

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
const read = (file: string, u: GeminiUsage): GeminiAnswer => ({
  functionCall: { name: 'read_file', args: { file_path: `__WORK__/${file}` } },
  usage: u,
});

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy',
    name: 'a healthy session on the default model (routed by a utility call), set up by rotscope gemini install',
    options: {
      files: { 'notes.txt': NOTES },
      viaInstall: { token: 'rs_fake_gemini_install_token' },
    },
    runs: [{ prompt: 'Read notes.txt and summarise it.' }],
    script: {
      main: [
        read('notes.txt', usage(21_000)),
        {
          text: 'Two tasks: rotate the API keys and fix the flaky billing test.',
          chunks: 3,
          usage: usage(21_400),
        },
      ],
    },
    findings: [],
    stored: { mainCalls: 2, sideCalls: ['utility_router'], compactions: [], cuts: [] },
  },
  {
    id: 'near-window',
    name: 'a session near the 1M window of gemini-2.5-pro',
    options: { model: 'gemini-2.5-pro', files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Look around the project and report.' }],
    script: {
      main: [
        {
          functionCall: { name: 'list_directory', args: { dir_path: '__WORK__' } },
          usage: usage(420_000),
        },
        read('notes.txt', usage(770_000)),
        { text: 'The project holds one notes file.', usage: usage(800_000) },
      ],
    },
    findings: [f('context_too_full', 'warning')],
    stored: { mainCalls: 3, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'tool-takeover',
    name: 'large read_file results that stay in context',
    options: {
      model: 'gemini-2.5-pro',
      files: {
        'big1.txt': bigText('alpha', 40),
        'big2.txt': bigText('beta', 40),
        'app.log': bigText('INFO', 2),
      },
    },
    runs: [{ prompt: 'Read big1.txt and big2.txt, then count the lines of app.log.' }],
    script: {
      main: [
        read('big1.txt', estimate),
        read('big2.txt', estimate),
        {
          functionCall: { name: 'run_shell_command', args: { command: 'wc -l app.log' } },
          usage: estimate,
        },
        { text: 'Both files are logs of lorem ipsum; app.log has 21 lines.', usage: estimate },
      ],
    },
    findings: [f('tool_takeover', 'warning', null, 'read_file')],
    stored: { mainCalls: 4, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'cut-off',
    name: 'a text, then (resumed) a function call, cut at MAX_TOKENS',
    options: { model: 'gemini-2.5-pro' },
    runs: [
      { prompt: 'Write a long report about the project.' },
      { prompt: 'Write the report to report.md instead.', resume: true },
    ],
    script: {
      main: [
        {
          label: 'text cut',
          text: 'Here is the start of a very long report about the project that goes on',
          chunks: 3,
          finishReason: 'MAX_TOKENS',
          usage: usage(24_000, 8_192),
        },
        {
          label: 'function call cut',
          functionCall: {
            name: 'write_file',
            args: { file_path: '__WORK__/report.md', content: 'The rep' },
          },
          finishReason: 'MAX_TOKENS',
          usage: usage(24_600, 8_192),
        },
        { label: 'end', text: 'I could not finish the report.', usage: usage(25_100) },
      ],
    },
    findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'critical', null, 'write_file')],
    stored: { mainCalls: 3, sideCalls: [], compactions: [], cuts: ['length', 'length+tool'] },
  },
  {
    id: 'cut-off-no-prompts',
    name: 'the same cut-offs with prompt logging off (what the output was is unknown)',
    options: { model: 'gemini-2.5-pro', logPrompts: false },
    runs: [
      { prompt: 'Write a long report about the project.' },
      { prompt: 'Write the report to report.md instead.', resume: true },
    ],
    script: {
      main: [
        {
          text: 'Here is the start of a very long report about the project that goes on',
          chunks: 3,
          finishReason: 'MAX_TOKENS',
          usage: usage(24_000, 8_192),
        },
        {
          functionCall: {
            name: 'write_file',
            args: { file_path: '__WORK__/report.md', content: 'The rep' },
          },
          finishReason: 'MAX_TOKENS',
          usage: usage(24_600, 8_192),
        },
        { text: 'I could not finish the report.', usage: usage(25_100) },
      ],
    },
    // without prompt logging neither the span nor the api_response holds the output
    findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'warning')],
    stored: { mainCalls: 3, sideCalls: [], compactions: [], cuts: ['length?tool', 'length?tool'] },
  },
  {
    id: 'compression',
    name: 'history compression at the start of a resumed turn (the compressor calls are side calls)',
    options: {
      model: 'gemini-2.5-pro',
      settings: { model: { compressionThreshold: 0.03 } },
      files: {
        'big1.txt': bigText('alpha', 80),
        'big2.txt': bigText('beta', 80),
        'big3.txt': bigText('gamma', 80),
      },
    },
    runs: [
      { prompt: 'Read big1.txt, big2.txt and big3.txt.' },
      { prompt: 'Now summarise what you read.', resume: true },
    ],
    script: {
      main: [
        read('big1.txt', usage(200_000)),
        read('big2.txt', usage(260_000)),
        read('big3.txt', usage(320_000)),
        { text: 'I read the three files.', usage: usage(380_000) },
        { label: 'after compression', text: 'They are logs of lorem ipsum.', usage: usage(14_000) },
      ],
      // the summary and its verification: each as big as the history it summarises
      compress: [
        {
          text: '<state_snapshot>read three log files</state_snapshot>',
          usage: usage(380_500, 300),
        },
        {
          text: '<state_snapshot>read big1-3.txt: logs</state_snapshot>',
          usage: usage(380_900, 300),
        },
      ],
    },
    findings: [f('history_lost', 'info', 'compacted')],
    stored: {
      mainCalls: 5,
      sideCalls: ['utility_compressor', 'utility_compressor'],
      compactions: ['gemini_cli_event/summarize'],
      cuts: [],
    },
  },
  {
    id: 'resumed',
    name: 'a resumed session stays one conversation',
    options: { model: 'gemini-2.5-pro', files: { 'notes.txt': NOTES } },
    runs: [
      { prompt: 'Read notes.txt.' },
      { prompt: 'What was the second item?', resume: true },
      { prompt: 'And the first?', resume: true },
    ],
    script: {
      main: [
        read('notes.txt', usage(21_000)),
        { text: 'It lists two tasks.', usage: usage(21_300) },
        { text: 'Fix the flaky billing test.', usage: usage(21_600) },
        { text: 'Rotate the API keys.', usage: usage(21_900) },
      ],
    },
    findings: [],
    stored: { mainCalls: 4, sideCalls: [], compactions: [], cuts: [] },
  },
];
