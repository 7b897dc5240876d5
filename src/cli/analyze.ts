/**
 * `rotscope analyze FILE...`: runs the four detectors offline on Claude Code transcripts
 * (.jsonl) and OTLP/JSON trace files, without a store. Prints each conversation's streams
 * with a sparkline of context usage and its findings, or `--json`. Exit code 0; 1 when
 * `--fail-on SEVERITY` is given and a finding of at least that severity exists; 2 on bad
 * usage or an unreadable file.
 */
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { flagError } from './flag-suggest.ts';
import { buildTimeline, driveDetectors } from '../detectors/index.ts';
import type { TimelineItem } from '../model/calls.ts';
import type { NormalizeContext } from '../ingest/index.ts';
import {
  isOverrideWindow,
  MAX_OVERRIDE_WINDOW,
  type WindowOverride,
} from '../model/window-overrides.ts';
import type { Compaction, LlmCall } from '../model/calls.ts';
import {
  DETECTOR_IDS,
  SEVERITIES,
  SEVERITY_RANK,
  type FindingDraft,
  type Severity,
} from '../model/findings.ts';
import {
  COUNT_THRESHOLDS,
  DEFAULT_THRESHOLDS,
  RATIO_THRESHOLDS,
  THRESHOLD_KEYS,
  checkThresholds,
  type ThresholdKey,
  type Thresholds,
} from '../model/thresholds.ts';
import { windowOverrideFlag, windowUnknownText } from '../model/window-unknown.ts';
import { SESSION_FILES } from '../model/agents/index.ts';
import { loadInputFile, withSubagentFiles, type InputFormat } from './input-file.ts';
import { plural } from '../model/plural.ts';

const FORMAT_NAMES: Record<string, string> = {
  ...Object.fromEntries(SESSION_FILES.map((f) => [f.format, f.name])),
  otlp_json: 'OTLP/JSON',
};

/** Where analyze writes. */
export interface AnalyzeIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const SPARK = '▁▂▃▄▅▆▇█';
/** Sparklines longer than this many calls are bucketed (each bucket shows its fullest call). */
const SPARK_WIDTH = 60;

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export const ANALYZE_USAGE = `Usage: rotscope analyze FILE... [--json] [--fail-on info|warning|critical]
                        [--window MODEL_GLOB=TOKENS]... [threshold flags]

Runs the context-rot detectors on the agents' session files
${SESSION_FILES.map((f) => `  ${f.name}s (${f.where})`).join('\n')}
and on OTLP/JSON trace files (one ExportTraceServiceRequest, an array of them, a Tempo export
with "batches", or JSON lines), without a server or database.

  --json                 machine-readable output
  --fail-on SEVERITY     exit 1 when a finding of at least SEVERITY exists (default: never)
  --window GLOB=TOKENS   context window for models matching GLOB (repeatable), e.g. 'claude-*=1000000'
${[...RATIO_THRESHOLDS, ...COUNT_THRESHOLDS].map((k) => `  --${kebab(k).padEnd(21)}default ${DEFAULT_THRESHOLDS[k]}${RATIO_THRESHOLDS.includes(k) ? ' (ratio 0..1)' : ''}`).join('\n')}

Exit codes: 0 done, 1 a finding at or above --fail-on, 2 bad usage or unreadable file.
`;

interface Options {
  files: string[];
  json: boolean;
  failOn: Severity | null;
  thresholds: Thresholds;
  windowOverrides: WindowOverride[];
}

type Parsed = { ok: true; options: Options } | { ok: false; errors: string[] } | { ok: 'help' };

function parseOptions(argv: string[]): Parsed {
  const thresholdFlags = Object.fromEntries(
    THRESHOLD_KEYS.map((k) => [kebab(k), { type: 'string' as const }]),
  );
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        'fail-on': { type: 'string' },
        window: { type: 'string', multiple: true },
        ...thresholdFlags,
      },
    });
  } catch (error) {
    // "unknown flag --x; did you mean --y?", not Node's raw parser message
    const known = ['json', 'help', 'fail-on', 'window', ...Object.keys(thresholdFlags)];
    const message = flagError('analyze', error, known)?.replace(/^rotscope analyze: /, '');
    return { ok: false, errors: [message ?? (error as Error).message] };
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  if (values.help === true) return { ok: 'help' };

  const errors: string[] = [];
  const files = parsed.positionals;
  if (files.length === 0) errors.push('no FILE given');

  const failOnRaw = values['fail-on'];
  let failOn: Severity | null = null;
  if (typeof failOnRaw === 'string') {
    if ((SEVERITIES as readonly string[]).includes(failOnRaw)) failOn = failOnRaw as Severity;
    else errors.push(`--fail-on must be info, warning or critical (got "${failOnRaw}")`);
  }

  const given: Record<ThresholdKey, unknown> = { ...DEFAULT_THRESHOLDS };
  const raws: Partial<Record<ThresholdKey, string>> = {};
  for (const key of THRESHOLD_KEYS) {
    const raw = values[kebab(key)];
    if (typeof raw !== 'string') continue;
    raws[key] = raw;
    given[key] = raw.trim() === '' ? NaN : Number(raw);
  }
  const checked = checkThresholds(given, {
    name: (key) => `--${kebab(key)}`,
    shown: (key) => (raws[key] === undefined ? String(given[key]) : `"${raws[key]}"`),
  });
  if (!checked.ok) errors.push(...checked.errors);
  const thresholds = checked.ok ? checked.thresholds : { ...DEFAULT_THRESHOLDS };

  const windowOverrides: WindowOverride[] = [];
  for (const raw of (values.window as string[] | undefined) ?? []) {
    const m = /^(.+)=(\d+)$/.exec(raw);
    const window = m ? Number(m[2]) : NaN;
    if (!m?.[1] || !isOverrideWindow(window)) {
      errors.push(
        `--window must be MODEL_GLOB=TOKENS with 1..${MAX_OVERRIDE_WINDOW} tokens, e.g. 'claude-*=1000000' (got "${raw}")`,
      );
    } else {
      windowOverrides.push({ model: m[1], window });
    }
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    options: { files, json: values.json === true, failOn, thresholds, windowOverrides },
  };
}

/** What one input file held. */
interface FileResult {
  path: string;
  format: InputFormat;
  calls: LlmCall[];
  compactions: Compaction[];
  /** Spans the OTLP decoder refused (0 for transcripts). */
  rejectedSpans: number;
}

type Loaded = { ok: true; file: FileResult } | { ok: false; error: string };

/** One file through the loader `rotscope import` uses too (src/cli/input-file.ts). */
async function loadFile(path: string, ctx: NormalizeContext): Promise<Loaded> {
  const loaded = await loadInputFile(path, ctx, 'analyze');
  if (!loaded.ok) return loaded;
  const { format, normalized, rejectedSpans } = loaded.file;
  return {
    ok: true,
    file: {
      path,
      format,
      calls: normalized.calls,
      compactions: normalized.compactions,
      rejectedSpans,
    },
  };
}

/** One character per usage ratio (null: unknown), ▁ for under 1/8 of the window up to █. */
export function sparkline(usages: readonly (number | null)[], width = SPARK_WIDTH): string {
  let points = usages;
  if (usages.length > width) {
    points = Array.from({ length: width }, (_, i) => {
      const bucket = usages.slice(
        Math.floor((i * usages.length) / width),
        Math.floor(((i + 1) * usages.length) / width),
      );
      const known = bucket.filter((u): u is number => u !== null);
      return known.length > 0 ? Math.max(...known) : null;
    });
  }
  return points
    .map((u) => (u === null ? '·' : SPARK[Math.min(7, Math.max(0, Math.floor(u * 8)))]))
    .join('');
}

/** One stream of a conversation, as reported. */
interface StreamReport {
  streamKey: string;
  agentId: string | null;
  /** Calls of the stream, side calls excluded. */
  calls: number;
  sideCalls: number;
  peakTokens: number | null;
  window: number | null;
  /** peakTokens / window of the fullest call, full precision. */
  peakUsage: number | null;
  /** usage / window per call in order (null when unknown), side calls excluded. */
  usage: (number | null)[];
  sparkline: string;
  /**
   * The models of its calls that carry token counts but have no window (no catalog row, no
   * --window): context_too_full does not judge those calls.
   */
  windowUnknown: string[];
}

interface ConversationReport {
  conversationId: string;
  calls: number;
  compactions: number;
  streams: StreamReport[];
  findings: FindingDraft[];
}

/** The model of a call with token counts and no window (context_too_full skips it), else null. */
function windowlessModel(call: LlmCall): string | null {
  const model = call.responseModel ?? call.requestModel;
  return model !== null && call.contextTokens !== null && call.contextWindow === null
    ? model
    : null;
}

/** Per model, the calls with token counts and no window, most calls first. */
function windowsUnknown(calls: Iterable<LlmCall>): Array<{ model: string; calls: number }> {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const model = windowlessModel(call);
    if (model !== null) counts.set(model, (counts.get(model) ?? 0) + 1);
  }
  return [...counts]
    .map(([model, n]) => ({ model, calls: n }))
    .sort((a, b) => b.calls - a.calls || a.model.localeCompare(b.model));
}

function usageOf(call: LlmCall): number | null {
  return call.contextTokens !== null && call.contextWindow !== null && call.contextWindow > 0
    ? call.contextTokens / call.contextWindow
    : null;
}

function streamReports(timelineCalls: readonly LlmCall[]): StreamReport[] {
  const byStream = new Map<string, LlmCall[]>();
  for (const call of timelineCalls) {
    const list = byStream.get(call.streamKey) ?? [];
    list.push(call);
    byStream.set(call.streamKey, list);
  }
  return [...byStream.entries()].map(([streamKey, all]) => {
    const calls = all.filter((c) => c.sideCall === null);
    let peak: LlmCall | null = null;
    for (const c of calls) {
      const u = usageOf(c);
      if (u !== null && (peak === null || u > (usageOf(peak) ?? -1))) peak = c;
    }
    const usage = calls.map(usageOf);
    return {
      streamKey,
      agentId: all[0]?.agentId ?? null,
      calls: calls.length,
      sideCalls: all.length - calls.length,
      peakTokens: peak?.contextTokens ?? null,
      window: peak?.contextWindow ?? null,
      peakUsage: peak ? usageOf(peak) : null,
      usage,
      sparkline: sparkline(usage),
      windowUnknown: windowsUnknown(all).map((m) => m.model),
    };
  });
}

function firstNsOf(item: TimelineItem | undefined): string {
  if (!item) return '0';
  return item.type === 'call' ? item.call.startNs : item.compaction.atNs;
}

/**
 * Findings in the order people read them: by the timeline position of the finding's call,
 * then in detector order, then as reported.
 */
function inTimelineOrder(
  findings: readonly FindingDraft[],
  timeline: readonly TimelineItem[],
): FindingDraft[] {
  const position = new Map<string, number>();
  timeline.forEach((item, i) => {
    if (item.type === 'call') position.set(`${item.call.traceId}:${item.call.spanId}`, i);
  });
  const pos = (f: FindingDraft) => position.get(`${f.traceId}:${f.spanId}`) ?? -1;
  const rank = (f: FindingDraft) => DETECTOR_IDS.indexOf(f.detector);
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => pos(a.f) - pos(b.f) || rank(a.f) - rank(b.f) || a.i - b.i)
    .map(({ f }) => f);
}

function analyzeConversations(
  files: readonly FileResult[],
  thresholds: Thresholds,
): ConversationReport[] {
  const calls = new Map<string, LlmCall>();
  const compactions = new Map<string, Compaction>();
  for (const f of files) {
    for (const c of f.calls) calls.set(`${c.traceId}:${c.spanId}`, c);
    for (const c of f.compactions) compactions.set(c.sourceKey, c);
  }
  const conversations = new Map<string, { calls: LlmCall[]; compactions: Compaction[] }>();
  const entry = (id: string) => {
    let e = conversations.get(id);
    if (!e) conversations.set(id, (e = { calls: [], compactions: [] }));
    return e;
  };
  for (const c of calls.values()) entry(c.conversationId).calls.push(c);
  for (const c of compactions.values()) entry(c.conversationId).compactions.push(c);

  const reports = [...conversations.entries()].map(([conversationId, conv]) => {
    const timeline = buildTimeline(conv.calls, conv.compactions);
    const ordered = timeline.flatMap((i) => (i.type === 'call' ? [i.call] : []));
    const { findings } = driveDetectors({}, timeline, { thresholds });
    return {
      conversationId,
      firstNs: firstNsOf(timeline[0]),
      report: {
        conversationId,
        calls: conv.calls.length,
        compactions: conv.compactions.length,
        streams: streamReports(ordered),
        findings: inTimelineOrder(findings.values(), timeline),
      },
    };
  });
  reports.sort((a, b) => {
    const x = BigInt(a.firstNs);
    const y = BigInt(b.firstNs);
    return x < y ? -1 : x > y ? 1 : a.conversationId.localeCompare(b.conversationId);
  });
  return reports.map((r) => r.report);
}

function severityCounts(conversations: readonly ConversationReport[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { info: 0, warning: 0, critical: 0 };
  for (const c of conversations) for (const f of c.findings) counts[f.severity] += 1;
  return counts;
}

const int = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function streamLine(s: StreamReport): string {
  const name = s.agentId === null ? 'main thread' : `sub-agent ${s.agentId}`;
  const calls = `${plural(s.calls, 'call')}${s.sideCalls > 0 ? ` (+${s.sideCalls} side)` : ''}`;
  const peak =
    s.peakTokens !== null && s.window !== null && s.peakUsage !== null
      ? `peak ${int(s.peakTokens)} of ${int(s.window)} tokens (${Math.round(s.peakUsage * 100)}%)`
      : s.windowUnknown.length > 0
        ? `window unknown for ${s.windowUnknown.join(', ')}`
        : 'peak unknown';
  return `  ${name}: ${calls}, ${peak}  ${s.sparkline}`;
}

function formatText(
  files: readonly FileResult[],
  conversations: readonly ConversationReport[],
  unknown: ReadonlyArray<{ model: string; calls: number }>,
): string {
  const out: string[] = [];
  for (const f of files) {
    const rejected = f.rejectedSpans > 0 ? `, ${plural(f.rejectedSpans, 'span')} rejected` : '';
    const kind = FORMAT_NAMES[f.format];
    out.push(
      `${basename(f.path)}: ${kind}, ${plural(f.calls.length, 'LLM call')}, ${plural(f.compactions.length, 'compaction')}${rejected}`,
    );
  }
  for (const c of conversations) {
    out.push(
      '',
      `conversation ${c.conversationId}: ${plural(c.calls, 'call')}, ${plural(c.streams.length, 'stream')}, ${plural(c.compactions, 'compaction')}`,
    );
    for (const s of c.streams) out.push(streamLine(s));
    if (c.findings.length === 0) out.push('  no findings');
    for (const f of c.findings)
      out.push(`  ${f.severity.toUpperCase().padEnd(8)} ${f.detector.padEnd(16)} ${f.summary}`);
  }
  const counts = severityCounts(conversations);
  const total = counts.info + counts.warning + counts.critical;
  const calls = conversations.reduce((n, c) => n + c.calls, 0);
  if (unknown.length > 0) out.push('');
  for (const m of unknown)
    out.push(`${windowUnknownText(m.model, m.calls)}; ${windowOverrideFlag(m.model)}`);
  out.push(
    '',
    `${plural(conversations.length, 'conversation')}, ${plural(calls, 'call')}, ` +
      `${plural(total, 'finding')} (${counts.critical} critical, ${counts.warning} warning, ${counts.info} info)`,
  );
  return `${out.join('\n')}\n`;
}

/**
 * Runs `rotscope analyze` with `argv` (the arguments after `analyze`). Reads the files,
 * normalizes them with the same code as the server, runs the detectors per conversation and
 * writes the report to `io.stdout` (errors to `io.stderr`). Returns the exit code: 0, 1 when
 * `--fail-on` matched a finding, 2 on bad usage or an unreadable file.
 */
export async function analyzeCommand(argv: string[], io: AnalyzeIo): Promise<number> {
  const parsed = parseOptions(argv);
  if (parsed.ok === 'help') {
    io.stdout(ANALYZE_USAGE);
    return 0;
  }
  if (!parsed.ok) {
    io.stderr(`rotscope analyze: ${parsed.errors.join('; ')}\n\n${ANALYZE_USAGE}`);
    return 2;
  }
  const { options } = parsed;
  const ctx: NormalizeContext = {
    workspaceId: 'analyze',
    captureContent: false,
    windowOverrides: options.windowOverrides,
  };
  const files: FileResult[] = [];
  for (const path of await withSubagentFiles(options.files)) {
    const loaded = await loadFile(path, ctx);
    if (!loaded.ok) {
      io.stderr(`rotscope analyze: ${loaded.error}\n`);
      return 2;
    }
    files.push(loaded.file);
  }

  const conversations = analyzeConversations(files, options.thresholds);
  const counts = severityCounts(conversations);
  // every call once, as the conversations count them (a call in two files is one call)
  const unknown = windowsUnknown(
    new Map(files.flatMap((f) => f.calls.map((c) => [`${c.traceId}:${c.spanId}`, c]))).values(),
  );
  if (options.json) {
    const report = {
      thresholds: options.thresholds,
      files: files.map((f) => ({
        path: f.path,
        format: f.format,
        calls: f.calls.length,
        compactions: f.compactions.length,
        rejectedSpans: f.rejectedSpans,
      })),
      conversations,
      totals: {
        conversations: conversations.length,
        calls: conversations.reduce((n, c) => n + c.calls, 0),
        findings: counts,
      },
      windowsUnknown: unknown,
    };
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout(formatText(files, conversations, unknown));
  }

  const failOn = options.failOn;
  if (failOn === null) return 0;
  const hit = SEVERITIES.some((s) => SEVERITY_RANK[s] >= SEVERITY_RANK[failOn] && counts[s] > 0);
  return hit ? 1 : 0;
}
