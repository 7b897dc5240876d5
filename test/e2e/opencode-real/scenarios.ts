/**
 * Scenarios for the real OpenCode (1.18.33): what the fake OpenAI-compatible API answers
 * (test/helpers/fake-opencode-api.ts), what OpenCode is asked (one `opencode run`, or several of
 * one session with `--continue`), the findings rotscope must settle on from its telemetry, and
 * what the stored conversation must hold. Token numbers are what the fake reports; the window is
 * gpt-4o's 128,000 (OpenCode compacts at 128,000 − 16,384 = 111,616).
 */
import type { OpenCodeSessionOptions } from '../../helpers/opencode-cli.ts';
import type {
  OpenCodeAnswer,
  OpenCodeScript,
  OpenCodeUsage,
} from '../../helpers/fake-opencode-api.ts';
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
  /** Finish reasons of the main-thread calls other than `stop` / `tool-calls`, in order, `+tool` when the output held a tool call. */
  cuts: string[];
}

export interface Scenario {
  id: string;
  name: string;
  options: Omit<OpenCodeSessionOptions, 'binary' | 'otlpUrl' | 'script'>;
  script: OpenCodeScript;
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

const usage = (prompt: number, output = 40, cached = 0) => ({ prompt, output, cached });

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

const read = (file: string, u: OpenCodeUsage): OpenCodeAnswer => ({
  toolCall: { name: 'read', args: { filePath: `__WORK__/${file}` } },
  usage: u,
});

export const SCENARIOS: Scenario[] = [
  {
    id: 'healthy',
    name: 'a healthy session, set up by rotscope opencode install (its opencode.json key and the lines it prints)',
    options: {
      files: { 'notes.txt': 'hello world\n' },
      viaInstall: { token: 'rs_fake_opencode_install_token' },
    },
    runs: [{ prompt: 'List the files here, then say done.' }],
    script: {
      main: [
        {
          toolCall: { name: 'bash', args: { command: 'ls', description: 'List files' } },
          usage: usage(12_000),
        },
        { text: 'Done: there is one file, notes.txt.', usage: usage(12_600, 30, 11_000) },
      ],
    },
    findings: [],
    stored: { mainCalls: 2, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'near-full-takeover',
    name: 'reads taking over a context that nears the window (two 40 KB logs read, then 72-76% of 128k)',
    options: { files: { 'big1.log': bigText('alpha', 40), 'big2.log': bigText('beta', 40) } },
    runs: [{ prompt: 'Read big1.log and big2.log, then summarise them.' }],
    script: {
      main: [
        read('big1.log', usage(20_000)),
        read('big2.log', usage(60_000)),
        {
          toolCall: { name: 'bash', args: { command: 'wc -l big1.log', description: 'Count' } },
          usage: usage(92_000),
        },
        { text: 'Both files are logs of lorem ipsum.', usage: usage(97_000) },
      ],
    },
    findings: [f('context_too_full', 'warning'), f('tool_takeover', 'warning', null, 'read')],
    stored: { mainCalls: 4, sideCalls: [], compactions: [], cuts: [] },
  },
  {
    id: 'cut-off',
    name: 'a text cut, then (resumed with --continue) a write call cut (OpenCode calls it invalid)',
    options: {},
    runs: [
      { prompt: 'Write a long report about the project.' },
      { prompt: 'Write the report to report.md instead.', resume: true },
    ],
    script: {
      main: [
        {
          label: 'text cut',
          text: 'Here is the start of a very long report about the project that goes on',
          finishReason: 'length',
          usage: usage(12_000, 16_384),
        },
        {
          label: 'tool call cut',
          toolCall: {
            name: 'write',
            args: { filePath: '__WORK__/report.md', content: 'The report: section one covers' },
            cutAt: 60,
          },
          finishReason: 'length',
          usage: usage(14_000, 16_384, 11_000),
        },
        { label: 'end', text: 'I could not finish the report.', usage: usage(14_500, 20, 12_000) },
      ],
    },
    findings: [f('output_cut_off', 'warning'), f('output_cut_off', 'critical', null, 'write')],
    stored: { mainCalls: 3, sideCalls: [], compactions: [], cuts: ['length', 'length+tool'] },
  },
  {
    id: 'compaction',
    name: "OpenCode's own auto-compaction past 111,616 tokens (its summary call a side call)",
    options: { files: { 'notes.txt': 'hello world\n' } },
    runs: [{ prompt: 'Read notes.txt, then say done.' }],
    script: {
      main: [
        read('notes.txt', usage(115_000)),
        { text: 'Done: notes.txt says hello world.', usage: usage(1_096, 30) },
      ],
    },
    findings: [f('context_too_full', 'critical'), f('history_lost', 'info', 'compacted')],
    stored: { mainCalls: 2, sideCalls: ['compaction'], compactions: ['span/summarize'], cuts: [] },
  },
];
