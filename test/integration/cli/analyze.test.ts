/**
 * `rotscope analyze` end to end: real files from test/fixtures/real (copied unedited from ../shared/fixtures/real) and
 * small OTLP/JSON files written to a temporary directory, through the real decoder,
 * normalizer and detectors.
 *
 * What the real transcript should give, computed by hand from its lines (see the numbers
 * below): 170 unique assistant messages in one session, 9 on the main thread and 161 in five
 * sidechains; usage = input + cache read + cache creation peaks at 42,726 tokens (21% of
 * claude-sonnet-4's 200,000), so no context_too_full; usage never falls from one call to the
 * next of a stream, so no history_lost; stop reasons are only null, tool_use and end_turn, so
 * no output_cut_off. Tool results are held per stream in tokens estimated from each call's
 * usage growth (split by characters over what was added since the previous call): two
 * streams hold one tool's results at ≥ 30% of the input for three calls: tool_takeover x 2.
 * (Shares of message characters alone, ignoring the system prompt and tool definitions a
 * transcript does not hold, gave 8 warnings, most of them overstated.)
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeCommand } from '../../../src/cli/analyze.ts';

const REAL = join(import.meta.dirname, '../../fixtures/real');
const TRANSCRIPT = join(REAL, 'claude-code_transcript_sidechains.jsonl');
const SESSION = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';

async function analyze(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await analyzeCommand(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
  });
  return { code, stdout, stderr };
}

interface JsonReport {
  files: {
    path: string;
    format: string;
    calls: number;
    compactions: number;
    rejectedSpans: number;
  }[];
  conversations: {
    conversationId: string;
    calls: number;
    compactions: number;
    streams: {
      streamKey: string;
      agentId: string | null;
      calls: number;
      sideCalls: number;
      peakTokens: number | null;
      window: number | null;
      sparkline: string;
      usage: (number | null)[];
    }[];
    findings: {
      detector: string;
      severity: string;
      streamKey: string;
      summary: string;
      details: Record<string, unknown>;
    }[];
  }[];
  totals: { conversations: number; calls: number; findings: Record<string, number> };
}

const STREAMS = [
  // [agent, calls, peak tokens, sparkline of usage/window]
  [null, 9, 21552, '▁'.repeat(9)],
  ['sidechain-6690d10e-f521-4ac0-800d-e5eb7a2d8072', 9, 14654, '▁'.repeat(9)],
  ['sidechain-60dade70-20bb-4edb-9dad-9f08267e0cc2', 34, 41160, '▁'.repeat(19) + '▂'.repeat(15)],
  ['sidechain-f4546a51-ea10-47e0-b4e0-76802974f8a9', 40, 29050, '▁'.repeat(30) + '▂'.repeat(10)],
  ['sidechain-0d692b0f-17cb-4fd0-94fb-215dabcef803', 25, 26483, '▁'.repeat(23) + '▂'.repeat(2)],
  ['sidechain-f4ab2bf6-d642-431a-85cb-66691f24c404', 53, 42726, '▁'.repeat(26) + '▂'.repeat(27)],
] as const;

const TAKEOVERS = [
  // [agent, tool, share of each call of the episode], in the order of the episodes' first calls
  // (a small result is credited at most one token per 2 characters of usage growth)
  ['sidechain-60dade70-20bb-4edb-9dad-9f08267e0cc2', 'Bash', [0.358, 0.359, 0.354]],
  ['sidechain-f4ab2bf6-d642-431a-85cb-66691f24c404', 'Read', [0.356, 0.352, 0.345]],
] as const;

describe('analyze on the real Claude Code transcript with sidechains', () => {
  it('prints the session, its six streams with sparklines, and two tool_takeover warnings', async () => {
    const { code, stdout, stderr } = await analyze(TRANSCRIPT);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(
      'claude-code_transcript_sidechains.jsonl: Claude Code transcript, 170 LLM calls, 0 compactions',
    );
    expect(lines).toContain(`conversation ${SESSION}: 170 calls, 6 streams, 0 compactions`);
    expect(lines).toContain(
      '  main thread: 9 calls, peak 21,552 of 200,000 tokens (11%)  ▁▁▁▁▁▁▁▁▁',
    );
    expect(lines).toContain(
      '  sub-agent sidechain-f4ab2bf6-d642-431a-85cb-66691f24c404: 53 calls, peak 42,726 of 200,000 tokens (21%)  ' +
        '▁'.repeat(26) +
        '▂'.repeat(27),
    );
    const findingLines = lines.filter((l) => /^ {2}(INFO|WARNING|CRITICAL) /.test(l));
    expect(findingLines).toHaveLength(2);
    for (const l of findingLines)
      expect(l).toMatch(/^ {2}WARNING {2}tool_takeover {4}Results of tool /);
    expect(findingLines[0]).toBe(
      // the episode lasts 6 calls: the finding follows it (issue 36 §5), not its first 3
      '  WARNING  tool_takeover    Results of tool Bash took 35%, 35%, 35%, then up to 35% of the ' +
        'input over 6 calls (14,358 tokens at peak) in a sub-agent. What to do: cut the command’s output before it ' +
        'reaches the model (head, tail, grep, a quieter flag), or clear old Bash results from the history.',
    );
    expect(lines.at(-2)).toBe(
      '1 conversation, 170 calls, 2 findings (0 critical, 2 warning, 0 info)',
    );
  });

  it('--json: the streams, usage and findings match the hand count', async () => {
    const { code, stdout } = await analyze(TRANSCRIPT, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as JsonReport;
    expect(report.files).toEqual([
      {
        path: TRANSCRIPT,
        format: 'claude_code_transcript',
        calls: 170,
        compactions: 0,
        rejectedSpans: 0,
      },
    ]);
    expect(report.totals).toEqual({
      conversations: 1,
      calls: 170,
      findings: { info: 0, warning: 2, critical: 0 },
    });
    const [conversation] = report.conversations;
    expect(conversation?.conversationId).toBe(SESSION);
    expect(
      conversation?.streams.map((s) => [s.agentId, s.calls, s.peakTokens, s.sparkline]),
    ).toEqual(STREAMS.map((s) => [...s]));
    for (const s of conversation?.streams ?? []) {
      expect(s.sideCalls).toBe(0);
      expect(s.window).toBe(200000);
      expect(s.usage).toHaveLength(s.calls);
    }
    const findings = conversation?.findings ?? [];
    expect(findings.every((f) => f.detector === 'tool_takeover' && f.severity === 'warning')).toBe(
      true,
    );
    const agentOf = (streamKey: string) => {
      const agent = streamKey.slice(SESSION.length + 1);
      return agent === 'main' ? null : agent;
    };
    expect(
      findings.map((f) => [
        agentOf(f.streamKey),
        f.details.tool,
        (f.details.calls as { share: number }[]).map((c) => c.share),
      ]),
    ).toEqual(TAKEOVERS.map(([agent, tool, shares]) => [agent, tool, [...shares]]));
  });

  it('--window overrides the catalog window: 42,726 of 50,000 tokens is critical', async () => {
    const { stdout } = await analyze(TRANSCRIPT, '--window', 'claude-sonnet-4-*=50000');
    expect(stdout).toContain(
      '  CRITICAL context_too_full Context 85% full (42,726 of 50,000 tokens) on claude-sonnet-4-20250514; results of tool Read were 25% of it.' +
        ' What to do: read files in ranges (an offset and a limit, or the lines you need) instead of whole files,' +
        ' or clear old Read results from the history; compact or start a fresh session before the context passes 70%.',
    );
  });

  it('exits 1 with --fail-on warning or info, 0 with --fail-on critical', async () => {
    expect((await analyze(TRANSCRIPT, '--fail-on', 'warning')).code).toBe(1);
    expect((await analyze(TRANSCRIPT, '--fail-on=info')).code).toBe(1);
    expect((await analyze(TRANSCRIPT, '--fail-on', 'critical')).code).toBe(0);
  });

  it('takes thresholds as flags: no share reaches 0.7; usage crosses 0.2 once in the run', async () => {
    const strict = await analyze(TRANSCRIPT, '--tool-share', '0.7', '--fail-on', 'info');
    expect(strict.code).toBe(0);
    expect(strict.stdout).toContain(
      '1 conversation, 170 calls, 0 findings (0 critical, 0 warning, 0 info)',
    );

    const low = await analyze(TRANSCRIPT, '--usage-threshold=0.2', '--json');
    const report = JSON.parse(low.stdout) as JsonReport;
    const full = report.conversations[0]?.findings.filter((f) => f.detector === 'context_too_full');
    expect(full).toHaveLength(1);
    expect(full?.[0]).toMatchObject({
      severity: 'warning',
      summary:
        'Context 21% full (42,726 of 200,000 tokens) on claude-sonnet-4-20250514; results of tool Read were 25% of it.' +
        ' What to do: read files in ranges (an offset and a limit, or the lines you need) instead of whole files,' +
        ' or clear old Read results from the history; compact or start a fresh session before the context passes 20%.',
      details: {
        runId: SESSION,
        fullestCall: { usageTokens: 42726, window: 200000, percent: 21.4, windowSource: 'catalog' },
        firstCrossingCall: { usageTokens: 40478, percent: 20.2 },
      },
    });
  });
});

describe('analyze on a synthetic transcript with a compaction and its summarizer file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rotscope-analyze-cc-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const base = { sessionId: 's1', isSidechain: false };
  const usage = (read: number, write: number) => ({
    input_tokens: 10,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: write,
    output_tokens: 50,
  });
  const assistant = (
    uuid: string,
    id: string,
    at: string,
    stop: string,
    u: object,
    extra = {},
  ) => ({
    ...base,
    ...extra,
    type: 'assistant',
    uuid,
    timestamp: `2026-01-01T00:00:${at}Z`,
    message: {
      id,
      model: 'claude-sonnet-4-5',
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: stop,
      usage: u,
    },
  });
  const main = [
    {
      ...base,
      type: 'user',
      uuid: 'u1',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:00.000Z',
      message: { role: 'user', content: 'hi' },
    },
    assistant('a1', 'msg_1', '01.000', 'end_turn', usage(150000, 5000)),
    {
      ...base,
      type: 'system',
      subtype: 'compact_boundary',
      uuid: 'b1',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:02.000Z',
      content: 'Conversation compacted',
      compactMetadata: { trigger: 'auto', preTokens: 155010 },
    },
    {
      ...base,
      type: 'user',
      uuid: 'u2',
      parentUuid: 'b1',
      isCompactSummary: true,
      timestamp: '2026-01-01T00:00:02.500Z',
      message: {
        role: 'user',
        content: 'This session is being continued from a previous conversation.',
      },
    },
    assistant('a2', 'msg_2', '03.000', 'max_tokens', usage(0, 20000)),
  ];
  const summarizer = [
    assistant('c1', 'msg_c', '01.500', 'end_turn', usage(155000, 0), {
      isSidechain: true,
      agentId: 'acompact-1',
    }),
  ];

  it('explains the drop by the boundary, counts the summarizer as a side call, and reports the cut-off', async () => {
    const mainFile = join(dir, 's1.jsonl');
    await mkdir(join(dir, 's1', 'subagents'), { recursive: true });
    const subFile = join(dir, 's1', 'subagents', 'agent-acompact-1.jsonl');
    await writeFile(mainFile, main.map((l) => JSON.stringify(l)).join('\n'));
    await writeFile(subFile, summarizer.map((l) => JSON.stringify(l)).join('\n'));

    const { code, stdout } = await analyze(mainFile, subFile, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as JsonReport;
    expect(report.files.map((f) => [f.format, f.calls, f.compactions])).toEqual([
      ['claude_code_transcript', 2, 1],
      ['claude_code_transcript', 1, 0],
    ]);
    const [conversation] = report.conversations;
    expect(
      conversation?.streams.map((s) => [s.agentId, s.calls, s.sideCalls, s.sparkline]),
    ).toEqual([
      [null, 2, 0, '▇▁'],
      ['acompact-1', 0, 1, ''],
    ]);
    expect(conversation?.findings.map((f) => [f.detector, f.severity, f.summary])).toEqual([
      [
        'context_too_full',
        'warning',
        'Context 77% full (155,010 of 200,000 tokens) on claude-sonnet-4-5.' +
          ' What to do: compact or start a fresh session before the context passes 70%.',
      ],
      [
        'history_lost',
        'info',
        'Context compacted automatically: 155,010 → 20,010 tokens (−87%) in the main thread, ' +
          'marked by the compaction boundary in the transcript; most lost: earlier messages (135,000 tokens).' +
          ' What to do: nothing if the summary kept what the task needs; if the agent forgot something' +
          ' after it, compact earlier or keep more recent messages.',
      ],
      [
        'output_cut_off',
        'warning',
        'Output cut off at 50 tokens on claude-sonnet-4-5.' +
          " What to do: raise Claude Code's output limit with CLAUDE_CODE_MAX_OUTPUT_TOKENS" +
          " (in the env block of ~/.claude/settings.json, e.g. 64000; the model's own cap still" +
          ' applies), or ask for a shorter answer.',
      ],
    ]);
    expect(conversation?.findings[1]?.details.marker).toMatchObject({
      source: 'compaction',
      evidence: 'transcript_boundary',
      trigger: 'auto',
      tokensBefore: 155010,
    });
  });
});

describe('analyze on OTLP/JSON files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rotscope-analyze-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const attr = (key: string, value: string | number) =>
    typeof value === 'number'
      ? { key, value: { intValue: String(value) } }
      : { key, value: { stringValue: value } };

  /** One ExportTraceServiceRequest with one semconv chat span (of trace `traceId`, one run). */
  function request(
    spanId: string,
    startSec: number,
    input: number,
    finish: string,
    traceId = '0af7651916cd43dd8448eb211c80319c',
  ) {
    return {
      resourceSpans: [
        {
          resource: { attributes: [attr('service.name', 'agent')] },
          scopeSpans: [
            {
              scope: { name: 'test' },
              spans: [
                {
                  traceId,
                  spanId,
                  name: 'chat claude-sonnet-4',
                  kind: 3,
                  startTimeUnixNano: `${startSec}000000000`,
                  endTimeUnixNano: `${startSec + 1}000000000`,
                  attributes: [
                    attr('gen_ai.operation.name', 'chat'),
                    attr('gen_ai.provider.name', 'anthropic'),
                    attr('gen_ai.request.model', 'claude-sonnet-4'),
                    attr('gen_ai.conversation.id', 'conv-1'),
                    attr('gen_ai.usage.input_tokens', input),
                    attr('gen_ai.usage.output_tokens', 4096),
                    {
                      key: 'gen_ai.response.finish_reasons',
                      value: { arrayValue: { values: [{ stringValue: finish }] } },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
  }

  it('reads JSON lines and a single request body, and finds the full context and the cut-off output', async () => {
    const lines = join(dir, 'spans.jsonl');
    await writeFile(
      lines,
      `${JSON.stringify(request('00f067aa0ba902b7', 1767225600, 100000, 'end_turn'))}\n` +
        `${JSON.stringify(request('00f067aa0ba902b8', 1767225610, 150000, 'max_tokens'))}\n`,
    );
    const { code, stdout } = await analyze(lines, '--json', '--fail-on', 'warning');
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as JsonReport;
    expect(report.files[0]).toMatchObject({ format: 'otlp_json', calls: 2 });
    const conversation = report.conversations[0];
    expect(conversation?.conversationId).toBe('conv-1');
    expect(conversation?.streams[0]?.sparkline).toBe('▅▇');
    expect(conversation?.findings.map((f) => [f.detector, f.severity])).toEqual([
      ['context_too_full', 'warning'],
      ['output_cut_off', 'warning'],
    ]);

    const single = join(dir, 'one.json');
    await writeFile(
      single,
      JSON.stringify(request('00f067aa0ba902b9', 1767225620, 180000, 'stop')),
    );
    const text = await analyze(single, '--fail-on', 'critical');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      '  CRITICAL context_too_full Context 90% full (180,000 of 200,000 tokens) on claude-sonnet-4.' +
        ' What to do: compact or start a fresh session before the context passes 70%.',
    );
  });

  it('never lowers a finding: a run that went critical stays critical when, forgotten after 64 newer runs, it comes back below the line', async () => {
    // context_too_full keeps the last 64 runs of a conversation; a late call of an older run
    // starts that run afresh and reports its anchor again, here as a warning. The evaluator
    // keeps the higher severity (DESIGN §6), and analyze runs the same driver.
    const trace = (n: number) => n.toString(16).padStart(32, '0');
    const span = (n: number) => n.toString(16).padStart(16, '0');
    const t0 = 1767225600;
    const requests = [
      request(span(1), t0, 180000, 'end_turn', trace(1)),
      ...Array.from({ length: 64 }, (_, i) =>
        request(span(i + 2), t0 + 10 * (i + 1), 1000, 'end_turn', trace(i + 2)),
      ),
      request(span(100), t0 + 10_000, 150000, 'end_turn', trace(1)),
    ];
    const file = join(dir, 'many-runs.jsonl');
    await writeFile(file, requests.map((r) => JSON.stringify(r)).join('\n'));
    const { code, stdout } = await analyze(file, '--json', '--fail-on', 'critical');
    const report = JSON.parse(stdout) as JsonReport;
    const full = report.conversations[0]?.findings.filter((f) => f.detector === 'context_too_full');
    expect(full?.map((f) => [f.severity, f.summary])).toEqual([
      [
        'critical',
        'Context 75% full (150,000 of 200,000 tokens) on claude-sonnet-4.' +
          ' What to do: compact or start a fresh session before the context passes 70%.',
      ],
    ]);
    expect(report.totals.findings.critical).toBe(1);
    expect(code).toBe(1);
  });

  it('reads the real OpenInference array of requests', async () => {
    const { code, stdout } = await analyze(
      join(REAL, 'otlp-json_openinference_openai.json'),
      '--json',
    );
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as JsonReport;
    expect(report.files[0]).toMatchObject({ format: 'otlp_json', calls: 6, rejectedSpans: 0 });
    expect(report.totals.findings).toEqual({ info: 0, warning: 0, critical: 0 });
  });

  it('reads the real Tempo export (batches)', async () => {
    const { code, stdout } = await analyze(join(REAL, 'tempo-export_genai_kagent.json'));
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^tempo-export_genai_kagent\.json: OTLP\/JSON, \d+ LLM calls?, 0 compactions\n/,
    );
  });

  it('refuses a file that is neither a transcript nor OTLP/JSON traces', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ resourceSpans: 'nope' }));
    const { code, stderr } = await analyze(bad);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^rotscope analyze: .*bad\.json: not OTLP\/JSON traces: /);

    const logs = join(dir, 'logs.json');
    await writeFile(logs, JSON.stringify({ resourceLogs: [] }));
    expect((await analyze(logs)).stderr).toBe(
      `rotscope analyze: ${logs}: OTLP logs are not supported by analyze; pass trace files\n`,
    );

    const other = join(dir, 'other.json');
    await writeFile(other, '{"foo": 1}\n');
    const neither = await analyze(other);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toBe(
      `rotscope analyze: ${other}: neither OTLP/JSON traces, a Claude Code transcript nor an agent's session file (Codex CLI, Gemini CLI, GitHub Copilot CLI, Qwen Code)\n`,
    );
  });
});

describe('analyze usage errors (exit 2)', () => {
  it.each([
    [[], 'no FILE given'],
    [
      [TRANSCRIPT, '--fail-on', 'severe'],
      '--fail-on must be info, warning or critical (got "severe")',
    ],
    [
      [TRANSCRIPT, '--usage-threshold', '1.5'],
      '--usage-threshold must be a ratio between 0 and 1 (got "1.5")',
    ],
    [
      [TRANSCRIPT, '--drop-ratio', 'abc'],
      '--drop-ratio must be a ratio between 0 and 1 (got "abc")',
    ],
    [
      [TRANSCRIPT, '--tool-persist-calls', '1.5'],
      '--tool-persist-calls must be a positive integer (got "1.5")',
    ],
    // The bounds are the API's (src/model/thresholds.ts): what analyze accepts, a workspace can store.
    [
      [TRANSCRIPT, '--tool-persist-calls', '0'],
      '--tool-persist-calls must be a positive integer (got "0")',
    ],
    [
      [TRANSCRIPT, '--usage-critical', '0.5'],
      '--usage-critical ("0.5") must be at least --usage-threshold (0.7)',
    ],
    [
      [TRANSCRIPT, '--window', 'claude'],
      '--window must be MODEL_GLOB=TOKENS with 1..100000000 tokens, e.g. \'claude-*=1000000\' (got "claude")',
    ],
    [
      [TRANSCRIPT, '--window', 'claude-*=100000001'],
      '--window must be MODEL_GLOB=TOKENS with 1..100000000 tokens, e.g. \'claude-*=1000000\' (got "claude-*=100000001")',
    ],
    [[TRANSCRIPT, '--bogus'], 'unknown flag --bogus'],
    [[TRANSCRIPT, '--fail-no', 'warning'], 'unknown flag --fail-no; did you mean --fail-on?'],
    [['/nonexistent/rotscope.jsonl'], 'cannot read /nonexistent/rotscope.jsonl: no such file'],
  ])('%j', async (argv, message) => {
    const { code, stdout, stderr } = await analyze(...argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });

  it('reports every bad flag at once', async () => {
    const { stderr } = await analyze('--usage-critical', '2', '--drop-min-tokens=-1');
    expect(stderr).toContain(
      'rotscope analyze: no FILE given; --usage-critical must be a ratio between 0 and 1 (got "2"); ' +
        '--drop-min-tokens must be a positive integer (got "-1")',
    );
  });

  it('--help prints the usage with the defaults and exits 0', async () => {
    const { code, stdout } = await analyze('--help');
    expect(code).toBe(0);
    expect(stdout).toContain('--usage-threshold      default 0.7 (ratio 0..1)');
    expect(stdout).toContain('--drop-min-tokens      default 2000');
  });
});
