/**
 * Scenarios for the real Qwen Code (0.24.4): what the fake OpenAI-compatible API answers
 * (test/helpers/fake-openai-chat.ts), what the CLI is asked (one run, or several of one session
 * with `--continue`), the findings rotscope must settle on from its telemetry, and what the stored
 * conversation must hold. Token numbers are what the fake reports. qwen3-coder-plus has a
 * 1,000,000-token window in Qwen Code's own table, which every call reports
 * (`qwen-code.context.usage`); Qwen Code compresses its history itself once the estimated next
 * prompt reaches 850,000 tokens, also in the middle of a turn (before a tool result goes out), and
 * on `/compress`. It truncates a read_file result to about 25,000 characters.
 */
import type { ChatAnswer, ChatScript, ChatUsage } from '../../helpers/fake-openai-chat.ts';
import type { QwenSessionOptions } from '../../helpers/qwen-code.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

/** What the stored conversation holds, as compared. */
export interface Stored {
  /** Main-thread calls (not side calls). */
  mainCalls: number;
  /** The side-call reasons, sorted. */
  sideCalls: string[];
  /** Compactions: `evidence/kind`, in time order. */
  compactions: string[];
  /** Finish reasons of the main-thread calls other than `stop`/`tool_calls`, in order (`?tool`: output unknown). */
  cuts: string[];
}

export interface Scenario {
  id: string;
  name: string;
  options: Omit<QwenSessionOptions, 'entry' | 'otlpUrl' | 'script'>;
  script: ChatScript;
  runs: Array<{ prompt: string; resume?: boolean }>;
  findings: Seen[];
  stored: Stored;
}

const f = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });

const usage = (prompt: number, output = 40): ChatUsage => ({ prompt, output });

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
const read = (file: string, u: ChatUsage, label?: string): ChatAnswer => ({
  ...(label ? { label } : {}),
  toolCall: { name: 'read_file', args: { file_path: `__WORK__/${file}` } },
  usage: u,
});

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy',
    name: 'a healthy session, set up by rotscope qwen install',
    options: { files: { 'notes.txt': NOTES }, viaInstall: true },
    runs: [{ prompt: 'Read notes.txt and summarise it.' }],
    script: {
      main: [
        read('notes.txt', usage(12_000)),
        {
          text: 'Two tasks: rotate the API keys and fix the flaky billing test.',
          usage: usage(12_600),
        },
      ],
    },
    findings: [],
    stored: { mainCalls: 2, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'near-window',
    name: "a session near Qwen Code's own 1M window (below its compression threshold); the memory extractor's call in its own lane",
    options: {},
    runs: [{ prompt: 'Summarise the project.' }],
    script: {
      // a turn the user query's own answer ends (no tool call): Qwen Code then runs its managed
      // memory extractor on the session
      main: [{ text: 'The project is a small notes folder.', usage: usage(780_000) }],
    },
    findings: [f('context_too_full', 'warning')],
    stored: {
      mainCalls: 1,
      sideCalls: ['managed-auto-memory-extractor'],
      compactions: [],
      cuts: [],
    },
  },
  {
    id: 'tool-takeover',
    name: 'large read_file results that stay in context (sizes from the tool_call logs)',
    options: {
      files: { 'big1.txt': bigText('alpha', 60), 'big2.txt': bigText('beta', 60) },
    },
    runs: [{ prompt: 'Read big1.txt and big2.txt, then count the lines of big1.txt.' }],
    script: {
      main: [
        read('big1.txt', usage(15_000)),
        read('big2.txt', usage(20_000)),
        {
          toolCall: { name: 'run_shell_command', args: { command: 'wc -l big1.txt' } },
          usage: usage(26_500),
        },
        {
          text: 'Both files are logs of lorem ipsum; big1.txt has 615 lines.',
          usage: usage(27_000),
        },
      ],
    },
    findings: [f('tool_takeover', 'warning', null, 'read_file')],
    stored: { mainCalls: 4, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'cut-off',
    name: 'a text and a tool call cut at the output limit, each re-sent by the CLI',
    options: { files: { 'notes.txt': NOTES } },
    runs: [{ prompt: 'Write a long report about notes.txt to report.md.' }],
    script: {
      main: [
        {
          label: 'text cut',
          text: 'Here is the start of a very long report about the project that goes on',
          finishReason: 'length',
          usage: usage(24_000, 32_768),
        },
        read('notes.txt', usage(24_000), 're-sent'),
        {
          label: 'tool call cut',
          toolCall: {
            name: 'write_file',
            args: { file_path: '__WORK__/report.md', content: 'The report is long' },
            cutAt: 40,
          },
          finishReason: 'length',
          usage: usage(24_600, 32_768),
        },
        { label: 're-sent', text: 'I could not write the report.', usage: usage(24_600) },
      ],
    },
    // the text cut is text (its logged response); nothing Qwen Code exports says the second cut
    // was a tool call: a warning with the output unknown
    findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'warning')],
    stored: {
      mainCalls: 4,
      sideCalls: [],
      compactions: [],
      cuts: ['length', 'length?tool'],
    },
  },
  {
    id: 'compaction',
    name: 'its auto-compression in the middle of a turn, then /compress in a run resumed with --continue (one conversation; the compressor calls are side calls)',
    options: { files: { 'big1.txt': bigText('alpha', 30) } },
    runs: [{ prompt: 'Read big1.txt twice.' }, { prompt: '/compress', resume: true }],
    script: {
      main: [
        read('big1.txt', usage(500_000)),
        read('big1.txt', usage(870_000)),
        { label: 'after compression', text: 'I read it twice.', usage: usage(30_000) },
      ],
      compress: [{ usage: usage(870_500, 300) }, { usage: usage(31_000, 300) }],
    },
    findings: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
    stored: {
      mainCalls: 3,
      sideCalls: ['compress', 'compress'],
      compactions: ['qwen_code_event/summarize', 'qwen_code_event/summarize'],
      cuts: [],
    },
  },
];
