/**
 * Findings read as advice (issue 9): every summary says what happened, ends with one line of
 * what to do, and holds no internal name (evidence kinds, detector ids, finish classes) and no
 * id or shortened id; ids stay in the structured fields. Walked over the findings of the real
 * captures (Claude Code 2.1.197 spans and logs, a real Claude Code transcript with sub-agents,
 * OpenInference and kagent exports) evaluated with the default knobs and with low ones, over
 * every detector fixture case, and through the Slack and email formatting.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInputFile } from '../../src/cli/input-file.ts';
import { defaultConfig } from '../../src/config.ts';
import { ADVICE_MARK } from '../../src/detectors/advice.ts';
import { driveDetectors } from '../../src/detectors/drive.ts';
import { DETECTORS } from '../../src/detectors/registry.ts';
import { DEFAULT_THRESHOLDS, DETECTOR_IDS, type Finding } from '../../src/model/findings.ts';
import { formatEmail } from '../../src/notifier/email.ts';
import { buildPayload } from '../../src/notifier/payload.ts';
import { formatSlack } from '../../src/notifier/slack.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { putAlertSettings } from '../../src/store/alerts.ts';
import { listFindings } from '../../src/store/findings.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { buildItems, loadAllCases } from '../unit/detectors/builder.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';
import { testEvaluator } from './evaluator/helpers.ts';

const REAL = join(import.meta.dirname, '../fixtures/real');
const CLAUDE_CODE = join(REAL, 'claude-code-2.1.197');
const WORKSPACES = { defaults: 'prose-defaults', low: 'prose-low' };
const LOW = {
  ...DEFAULT_THRESHOLDS,
  usageThreshold: 0.05,
  usageCritical: 0.15,
  toolShare: 0.2,
  toolPersistCalls: 1,
  dropRatio: 0.1,
  dropMinTokens: 200,
};

/** Names of the model and the pipeline that must never reach a person's summary. */
const INTERNAL_NAMES = [
  ...DETECTOR_IDS,
  'span_event',
  'message_part',
  'finish_reason',
  'claude_code_event',
  'claude_code_side_call',
  'transcript_boundary',
  'context_overflow',
  'output_limit',
  'tool_call',
  'tool_spans',
  'exclusive_producer',
  'exclusive_inferred',
  'no_cache',
  'windowSource',
  'streamKey',
];

type Prose = Pick<
  Finding,
  'detector' | 'summary' | 'conversationId' | 'runId' | 'traceId' | 'spanId' | 'streamKey'
> & { model: string | null; details: Record<string, unknown> };

/** The tool names a finding's details carry: the only snake_case words its prose may hold. */
function toolNames(details: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  const add = (v: unknown) => typeof v === 'string' && names.add(v);
  add(details.tool);
  add(details.toolName);
  for (const part of (details.partsLost as Array<{ name?: unknown }> | null) ?? []) add(part.name);
  add((details.fullestCall as { topTool?: { name?: unknown } } | null)?.topTool?.name);
  return names;
}

/** Every way a summary can fail to read as advice, as messages (empty when it reads well). */
function proseProblems(f: Prose): string[] {
  const problems: string[] = [];
  const { summary } = f;
  const marks = summary.split(ADVICE_MARK).length - 1;
  if (marks !== 1) problems.push(`${marks} advice lines`);
  const advice = summary.split(ADVICE_MARK)[1] ?? '';
  if (advice.length < 20) problems.push(`advice too short: "${advice}"`);
  if (/[\r\n]/.test(summary)) problems.push('more than one line');
  if (summary.includes('…')) problems.push('a shortened value (…)');
  for (const name of INTERNAL_NAMES) if (summary.includes(name)) problems.push(`names ${name}`);
  const tools = toolNames(f.details);
  const prose = f.model ? summary.split(f.model).join('') : summary;
  for (const word of prose.match(/\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b/g) ?? [])
    // An environment variable in capitals is a setting the user changes (Claude Code's
    // CLAUDE_CODE_MAX_OUTPUT_TOKENS), not one of ours.
    if (!tools.has(word) && !/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(word))
      problems.push(`internal-looking name ${word}`);
  for (const run of prose.match(/\b[0-9a-f]{8,}\b/gi) ?? [])
    if (!/^\d+$/.test(run) || run.length > 12) problems.push(`an id-like run ${run}`);
  for (const id of [f.conversationId, f.runId, f.traceId, f.spanId, ...f.streamKey.split('|')]) {
    if (id.length >= 8 && prose.includes(id.slice(0, 8))) problems.push(`holds id ${id}`);
  }
  return problems;
}

let store: TestStore;
const stored: Finding[] = [];

async function ingestCapture(pipeline: IngestPipeline, ws: string, dir: string): Promise<void> {
  for (const file of readdirSync(dir).sort()) {
    const encoding = file.endsWith('.pb') ? 'protobuf' : file.endsWith('.json') ? 'json' : null;
    if (encoding === null) continue;
    const body = readFileSync(join(dir, file));
    const input = encoding === 'json' ? body.toString('utf8') : new Uint8Array(body);
    if (file.includes('-traces.')) {
      const r = decodeTraces(input, encoding);
      if (!r.ok) throw new Error(`${file}: ${r.reason}`);
      await pipeline.ingestSpans(ws, r.value.items);
    } else {
      const r = decodeLogs(input, encoding);
      if (!r.ok) throw new Error(`${file}: ${r.reason}`);
      await pipeline.ingestLogs(ws, r.value.items);
    }
  }
}

beforeAll(async () => {
  store = await createTestStore();
  const pipeline = new IngestPipeline(store);
  for (const ws of Object.values(WORKSPACES)) {
    await ensureWorkspace(store.db, ws);
    for (const run of ['compaction', 'cut-beta', 'cut-plain', 'large-results', 'overflow'])
      await ingestCapture(pipeline, ws, join(CLAUDE_CODE, run));
    const context = await pipeline.context(ws);
    for (const file of [
      'claude-code_transcript_sidechains.jsonl',
      'otlp-json_openinference_openai.json',
      'tempo-export_genai_kagent.json',
    ]) {
      const loaded = await loadInputFile(join(REAL, file), context, 'import');
      if (!loaded.ok) throw new Error(loaded.error);
      await pipeline.ingestNormalized(ws, loaded.file.normalized);
    }
  }
  await putAlertSettings(store.db, WORKSPACES.low, {
    enabled: true,
    thresholds: LOW,
    windowOverrides: [],
  });
  const evaluator = testEvaluator(store);
  while ((await evaluator.runOnce()) > 0);
  await evaluator.stop();
  for (const ws of Object.values(WORKSPACES)) {
    const page = await listFindings(store.db, ws, {}, { limit: 500 });
    stored.push(...page.items);
  }
}, 180_000);
afterAll(async () => {
  await store?.close();
});

describe('findings read as advice', () => {
  it('over the real captures: every detector and kind, each summary plain, with one line of what to do', () => {
    // Not vacuous: the real data raises every detector, and both kinds of history_lost.
    expect(new Set(stored.map((f) => f.detector))).toEqual(new Set(DETECTOR_IDS));
    expect(new Set(stored.filter((f) => f.kind).map((f) => f.kind))).toEqual(
      new Set(['compacted', 'lost']),
    );
    const bad = stored
      .map((f) => ({ summary: f.summary, problems: proseProblems(f) }))
      .filter((f) => f.problems.length > 0);
    expect(bad).toEqual([]);
  });

  it('over every detector fixture case', () => {
    let seen = 0;
    for (const { detector, cases } of loadAllCases()) {
      for (const c of cases) {
        const found = driveDetectors(
          {},
          buildItems(c.calls),
          { thresholds: { ...DEFAULT_THRESHOLDS, ...c.thresholds } },
          { detectors: DETECTORS.filter((d) => d.id === detector) },
        ).findings.values();
        for (const f of found) {
          seen += 1;
          expect({ case: c.name, problems: proseProblems(f) }).toEqual({
            case: c.name,
            problems: [],
          });
        }
      }
    }
    expect(seen).toBeGreaterThan(40);
  });

  it('the checks catch the old wording', () => {
    const old = stored.find((f) => f.detector === 'history_lost' && f.kind === 'compacted')!;
    const shown = (summary: string) => proseProblems({ ...old, summary });
    expect(
      shown(`Context compacted (transcript_boundary, auto) in run ${old.runId.slice(0, 8)}…`),
    ).toEqual(
      expect.arrayContaining([
        '0 advice lines',
        'names transcript_boundary',
        'a shortened value (…)',
        `holds id ${old.runId}`,
      ]),
    );
  });

  it('Slack and email put the advice on a line of its own', () => {
    const config = defaultConfig();
    for (const finding of stored) {
      const payload = buildPayload(finding, 'finding.created', finding.workspace, config);
      const advice = finding.summary.split(ADVICE_MARK)[1]!;
      const slack = formatSlack(payload);
      const section = slack.blocks[0];
      expect(section?.type === 'section' && section.text?.text).toContain(
        `\n*What to do:* ${advice.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}`,
      );
      const email = formatEmail(payload);
      expect(email.text).toContain(`\nWhat to do: ${advice}\n`);
      expect(email.subject).not.toContain('What to do');
      for (const name of INTERNAL_NAMES) expect(email.subject).not.toContain(name);
    }
  });
});
