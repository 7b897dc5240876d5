/**
 * Producers × expected findings, end to end. Each row starts a fresh rotscope with its
 * evaluator (test/helpers/producers/e2e.ts) and the fake LLM, runs the producer's driver (a real
 * SDK and instrumentation, test/helpers/producers/<name>.ts) over the real OTLP/HTTP exporters,
 * and checks the exact findings rotscope drew from what the producer sent. The row's own checks
 * (test/e2e/producers/<name>.ts) pin what the normalizer stored: spans, calls, usage, parts,
 * tool results, compactions. The scripted conversations and what each producer emits:
 * test/e2e/producers/README.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findingsOf,
  startHarness,
  type FindingRow,
  type Harness,
  type ProducerRun,
} from '../helpers/producers/e2e.ts';
import { PRODUCERS, type ProducerName } from '../helpers/producers/index.ts';
import * as anthropicSdk from '../helpers/producers/anthropic-sdk.ts';
import * as claudeCode from '../helpers/producers/claude-code.ts';
import * as langchainOpenInference from '../helpers/producers/langchain-openinference.ts';
import * as langfuse from '../helpers/producers/langfuse.ts';
import { AGENT_SESSION } from '../helpers/producers/openinference-agents.ts';
import * as openInference from '../helpers/producers/openinference.ts';
import { RESPONSES_CONVERSATION, type OtelGenaiRun } from '../helpers/producers/otel-genai.ts';
import * as traceloopAnthropic from '../helpers/producers/traceloop-anthropic.ts';
import * as traceloopOpenai from '../helpers/producers/traceloop-openai.ts';
import * as vercelAi from '../helpers/producers/vercel-ai.ts';
import { anthropicSdkRows } from './producers/anthropic-sdk.ts';
import { claudeCodeRows } from './producers/claude-code.ts';
import { langchainOpenInferenceRows } from './producers/langchain-openinference.ts';
import { langfuseRows } from './producers/langfuse.ts';
import { openInferenceAgentsRows } from './producers/openinference-agents.ts';
import { openInferenceRows } from './producers/openinference.ts';
import { otelGenaiRows } from './producers/otel-genai.ts';
import { traceloopAnthropicRows } from './producers/traceloop-anthropic.ts';
import { traceloopOpenaiRows } from './producers/traceloop-openai.ts';
import { vercelAiRows } from './producers/vercel-ai.ts';

/** One expected finding: conversation, detector, severity, kind, tool (tool_takeover's tool). */
type Expected = [
  conversation: string,
  detector: FindingRow['detector'],
  severity: FindingRow['severity'],
  kind: string | null,
  tool: string | null,
];

/**
 * Findings in value order: anchors are span ids (random), so two findings of one detector in
 * one conversation (the loop's two cut calls) come back in either order.
 */
const byValue = (l: Expected[]) =>
  [...l].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

interface Row<R> {
  name: ProducerName;
  /** The conversation ids of this run, by the label the findings use. */
  conversations(result: R): Record<string, string>;
  /** Every finding of the run (compared in value order, see byValue). */
  findings: Expected[];
  /** The row's own checks of the stored rows. */
  checks(ctx: ProducerRun<R>): void;
}

/** A row of the table, its driver's result type erased (the table holds every row). */
const row = <R>(r: Row<R>) => r as Row<unknown>;

/**
 * The scripted "finding" conversation (test/helpers/producers/script.ts): its second call sits
 * at 80% of the window, between usageThreshold (0.7) and usageCritical (0.85), and stops on the
 * output limit with text, not a tool call.
 */
const FINDING: Expected[] = [
  ['finding', 'context_too_full', 'warning', null, null],
  ['finding', 'output_cut_off', 'warning', null, null],
];
// The "tools" conversation stays quiet everywhere: far below the window, no call cut off, and
// a tool's results are in at most two calls' input (tool_takeover needs 1 + toolPersistCalls).

const TABLE: Array<Row<unknown>> = [
  row<OtelGenaiRun>({
    name: 'otel-genai',
    conversations: (r) => ({
      tools: r.toolsTraceId,
      finding: r.findingTraceId,
      responses: RESPONSES_CONVERSATION,
    }),
    findings: FINDING,
    checks: otelGenaiRows,
  }),
  row<void>({
    name: 'traceloop-openai',
    conversations: () => ({
      tools: traceloopOpenai.TOOLS_SESSION,
      finding: traceloopOpenai.FINDING_SESSION,
    }),
    findings: FINDING,
    checks: traceloopOpenaiRows,
  }),
  row<void>({
    name: 'traceloop-anthropic',
    conversations: () => ({
      tools: traceloopAnthropic.TOOLS_SESSION,
      finding: traceloopAnthropic.FINDING_SESSION,
    }),
    findings: FINDING,
    checks: traceloopAnthropicRows,
  }),
  row<void>({
    name: 'openinference',
    conversations: () => ({
      tools: openInference.TOOLS_SESSION,
      finding: openInference.FINDING_SESSION,
    }),
    findings: FINDING,
    checks: openInferenceRows,
  }),
  row<{ finalOutput: string }>({
    name: 'openinference-agents',
    conversations: () => ({ agent: AGENT_SESSION }),
    // one agent run of the tools script: no finding
    findings: [],
    checks: openInferenceAgentsRows,
  }),
  row<void>({
    name: 'vercel-ai',
    conversations: () => ({
      tools: vercelAi.TOOLS_SESSION,
      anthropic: vercelAi.ANTHROPIC_SESSION,
      finding: vercelAi.FINDING_SESSION,
    }),
    findings: FINDING,
    checks: vercelAiRows,
  }),
  row<void>({
    name: 'anthropic-sdk',
    conversations: () => ({
      tools: anthropicSdk.TOOLS_CONVERSATION,
      finding: anthropicSdk.FINDING_CONVERSATION,
    }),
    findings: FINDING,
    checks: anthropicSdkRows,
  }),
  row<void>({
    name: 'langchain-openinference',
    conversations: () => ({
      loop: langchainOpenInference.LOOP_SESSION,
      finding: langchainOpenInference.FINDING_SESSION,
    }),
    findings: [
      ...FINDING,
      // calls 7→8 of the loop: 29,000 → 6,000 tokens with no compaction marker
      ['loop', 'history_lost', 'warning', 'lost', null],
      // call 5: a cut text (warning), call 6: a tool call cut at the output limit (critical)
      ['loop', 'output_cut_off', 'warning', null, null],
      ['loop', 'output_cut_off', 'critical', null, null],
      // read_file's 3,000 chars in the input of calls 2–4 (the tool named by message order)
      ['loop', 'tool_takeover', 'warning', null, 'read_file'],
    ],
    checks: langchainOpenInferenceRows,
  }),
  row<void>({
    name: 'langfuse',
    conversations: () => ({ loop: langfuse.LOOP_SESSION, finding: langfuse.FINDING_SESSION }),
    // no finish reason anywhere: output_cut_off is blind (the cut calls 5, 6 and "finding" 2)
    findings: [
      ['finding', 'context_too_full', 'warning', null, null],
      ['loop', 'history_lost', 'warning', 'lost', null],
      ['loop', 'tool_takeover', 'warning', null, 'read_file'],
    ],
    checks: langfuseRows,
  }),
  row<void>({
    name: 'claude-code',
    conversations: () => ({
      tools: claudeCode.TOOLS_SESSION,
      finding: claudeCode.FINDING_SESSION,
    }),
    findings: [
      ['finding', 'context_too_full', 'warning', null, null],
      // the compaction before prompt 2's call: the drop is explained, so info
      ['finding', 'history_lost', 'info', 'compacted', null],
      ['finding', 'output_cut_off', 'warning', null, null],
    ],
    checks: claudeCodeRows,
  }),
];

describe.each(TABLE)('producer $name', (r) => {
  // filled in by beforeAll, which runs before the row's own hooks and tests
  const ctx = {} as ProducerRun<unknown>;
  let h: Harness | undefined;

  beforeAll(async () => {
    h = await startHarness();
    ctx.h = h;
    ctx.result = await PRODUCERS[r.name].run(h.opts);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  it('draws exactly the expected findings', async () => {
    const label = new Map(Object.entries(r.conversations(ctx.result)).map(([k, v]) => [v, k]));
    const found = (await findingsOf(ctx.h)).map((f): Expected => {
      const details = f.details as { tool?: string } | null;
      return [
        label.get(f.conversation_id) ?? f.conversation_id,
        f.detector,
        f.severity,
        f.kind,
        details?.tool ?? null,
      ];
    });
    expect(byValue(found)).toEqual(byValue(r.findings));
  });

  r.checks(ctx);
});
