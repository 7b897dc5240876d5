/**
 * Scenarios for the real GitHub Copilot CLI (1.0.102): what the fake Chat Completions API answers
 * (test/helpers/copilot-cli.ts), what the CLI is asked (one `copilot -p` run, or two of one
 * session with `--continue`), the findings rotscope must settle on from its telemetry, and what
 * the stored conversation must hold.
 *
 * Copilot judges its context against its own window (`token_limit` 64,000 for gpt-4o, not the
 * model's 128k) and compacts in the background once its own count of the history passes about
 * 45,000 tokens (measured: after the 11th 16 KB file read here): so the fill scenario reads eleven
 * such files with `view` (the largest it reads at once), the fake reporting the request's bytes / 4
 * less 2,000 as input tokens. Its summary request is answered by the fake and never exported.
 */
import type { CopilotScript, CopilotSessionOptions } from '../../helpers/copilot-cli.ts';
import type { Seen } from '../../helpers/seen-findings.ts';

export type { Seen };

/** What the stored conversation holds, as compared. */
export interface Stored {
  /** Main-thread calls (not side calls). */
  mainCalls: number;
  /** Compactions: `evidence/kind`, in time order. */
  compactions: string[];
  /** Finish reasons other than `stop` and `tool_calls` of the main-thread calls, in order, with `+tool` when the output held a tool call. */
  cuts: string[];
  /** `window/source` of the calls, distinct. */
  windows: string[];
}

export interface Scenario {
  id: string;
  name: string;
  options: Omit<CopilotSessionOptions, 'binary' | 'otlpUrl' | 'script'>;
  script: CopilotScript;
  runs: Array<{ prompt: string; resume?: boolean }>;
  findings: Seen[];
  stored: Stored;
  /** Then `rotscope import` its session file: the same calls, counted once, the same findings. */
  importSessionFile?: boolean;
}

const f = (
  detector: string,
  severity: string,
  kind: string | null = null,
  tool: string | null = null,
): Seen => ({ detector, severity, kind, tool });

/** About `kb` KB of numbered log lines (100 characters a line). */
export function bigText(label: string, kb: number): string {
  const lines = Math.ceil((kb * 1024) / 100);
  return Array.from({ length: lines }, (_, i) =>
    `${label} ${String(i).padStart(5, '0')}: ${'lorem ipsum dolor sit amet '.repeat(4)}`.slice(
      0,
      99,
    ),
  ).join('\n');
}

const READS = 11;
const logName = (i: number) => `part-${String(i).padStart(2, '0')}.log`;
const WINDOW = ['64000/agent'];

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy-resumed',
    name: 'a healthy session resumed with --continue, set up by rotscope copilot install',
    options: { viaInstall: true, files: { 'notes.txt': 'TODO\n- rotate the API keys\n' } },
    runs: [{ prompt: 'List the files here.' }, { prompt: 'Now count them.', resume: true }],
    script: {
      main: [
        {
          toolCall: { name: 'bash', args: { command: 'ls -la', description: 'List files' } },
          usage: { input: 12000, output: 40 },
        },
        {
          text: 'There is one file, notes.txt.',
          usage: { input: 12600, cached: 11000, output: 20 },
        },
        {
          toolCall: { name: 'bash', args: { command: 'ls | wc -l', description: 'Count' } },
          usage: { input: 13000, cached: 12000, output: 40 },
        },
        { text: '1', usage: { input: 13300, cached: 12000, output: 10 } },
      ],
    },
    findings: [],
    stored: { mainCalls: 4, compactions: [], cuts: [], windows: WINDOW },
  },
  {
    id: 'view-fills-and-compacts',
    name: 'view takes over, the context nears its own 64k window, Copilot compacts',
    options: {
      files: Object.fromEntries(
        Array.from({ length: READS }, (_, i) => [logName(i), bigText(logName(i), 15.8)]),
      ),
    },
    runs: [{ prompt: 'Read every log here one by one, then summarise them.' }],
    script: {
      main: [
        ...Array.from({ length: READS }, (_, i) => ({
          toolCall: { name: 'view', args: { path: `__WORK__/${logName(i)}` } },
          usage: { estimate: true as const, offset: -2000 },
        })),
        ...[0, 1, 2].map((i) => ({
          toolCall: { name: 'bash', args: { command: `echo ${i}`, description: 'echo' } },
          usage: { estimate: true as const, offset: -2000 },
        })),
        { text: 'The logs hold numbered lines.', usage: { estimate: true, offset: -2000 } },
      ],
    },
    // one takeover (none after the compaction), the fill on Copilot's own window, the drop a compaction
    findings: [
      f('context_too_full', 'warning'),
      f('tool_takeover', 'warning', null, 'view'),
      f('history_lost', 'info', 'compacted'),
    ],
    importSessionFile: true,
    stored: {
      mainCalls: READS + 4,
      compactions: ['span_event/summarize'],
      cuts: [],
      windows: WINDOW,
    },
  },
  {
    id: 'cut-offs',
    name: 'a text cut off (Copilot asks to continue), then a tool call cut off, without message content',
    options: { env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' } },
    runs: [{ prompt: 'Write the report, then list the files.' }],
    script: {
      main: [
        {
          text: 'Here is the first part of the report, which goes on and on',
          finish: 'length',
          usage: { input: 12000, output: 4096 },
        },
        {
          toolCall: { name: 'bash', args: { command: 'ls -la', description: 'List' }, cutAt: 14 },
          finish: 'length',
          usage: { input: 12500, cached: 11000, output: 4096 },
        },
        { text: 'Done.', usage: { input: 13000, cached: 12000, output: 20 } },
      ],
    },
    findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'critical', null, 'bash')],
    stored: { mainCalls: 3, compactions: [], cuts: ['length', 'length+tool'], windows: WINDOW },
  },
];
