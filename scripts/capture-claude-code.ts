/**
 * Checks a Claude Code release with one command, and keeps what it sent as fixtures:
 *
 *   npm run capture:claude-code -- <version> [<version> ...] [--only <id>,<id>] [--out <dir>]
 *   npm run capture:claude-code -- --install-only [<version> ...]   (no version: every verified one)
 *
 * For each version: installs `@anthropic-ai/claude-code@<version>` into its cache folder if it is
 * not there (`$ROTSCOPE_CLAUDE_CODE_HOME/claude-code-<version>`, default `~/.cache/...`: the layout
 * `.ci/run` and the real-CLI test use), then runs every real-CLI scenario
 * (test/e2e/claude-code-real/scenarios.ts) with it, offline, against the loopback fake API and a
 * real `rotscope serve`, and prints per scenario the findings from telemetry, from the transcript
 * (`rotscope analyze`) and from `rotscope import`, and whether they are the expected ones. The
 * captures go to test/fixtures/claude-code/<version>/<scenario id>/: the OTLP trace and log bodies
 * as the CLI sent them (gzip of the transport removed; metrics dropped, rotscope drops them too),
 * the transcripts it wrote, and `capture.json` (the fake API's request log, what was expected
 * and what was found). Every stored file but `capture.json` is brotli-compressed (`.br`).
 *
 * Exits 0 when every scenario matched on every version, 1 otherwise (the fixtures are written
 * either way: they are what to attach to an issue). Only the install step uses the network (npm);
 * everything after it runs under the tests' network guard, the CLI in a private network namespace
 * where `unshare -n` works.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants } from 'node:zlib';
import {
  NEWEST_VERIFIED_CLAUDE_CODE,
  VERIFIED_CLAUDE_CODE_VERSIONS,
  installClaudeCode,
} from '../test/helpers/claude-code-cli.ts';
import { canIsolateNetwork } from '../test/helpers/private-network.ts';
import { startChildServer } from '../test/helpers/child-server.ts';
import {
  describeSeen,
  expectedFromTranscript,
  importAndEvaluate,
  runScenario,
  sameSeen,
  startOtlpRecorder,
  type RecordedBody,
  type ScenarioOutcome,
} from '../test/e2e/claude-code-real/run-scenario.ts';
import { SCENARIOS, type Scenario, type Seen } from '../test/e2e/claude-code-real/scenarios.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE =
  'usage: npm run capture:claude-code -- <version> [<version> ...] [--only <id>,<id>] [--out <dir>]\n' +
  '       npm run capture:claude-code -- --install-only [<version> ...]';

interface Args {
  versions: string[];
  installOnly: boolean;
  only: string[] | null;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    versions: [],
    installOnly: false,
    only: null,
    out: join(ROOT, 'test/fixtures/claude-code'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--install-only') args.installOnly = true;
    else if (a === '--only') args.only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--out') args.out = argv[++i] ?? args.out;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}\n${USAGE}`);
    else args.versions.push(a.replace(/^v/, ''));
  }
  if (args.installOnly && args.versions.length === 0)
    args.versions = [...VERIFIED_CLAUDE_CODE_VERSIONS];
  if (args.versions.length === 0) throw new Error(USAGE);
  return args;
}

/**
 * Brotli at its best with a 16 MB window: 2.1.332 repeats its ~100 KB system prompt snapshot in
 * every transcript entry of that kind, which gzip's 32 KB window cannot see (a quarter the size).
 * Read one with `zlib.brotliDecompressSync(readFileSync(path))`.
 */
const compress = (data: Buffer) =>
  brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });

const signalOf = (path: string) => path.replace(/^\/v1\//, '');

/** Writes one scenario's captures; returns the size written, in bytes. */
function writeScenarioFixtures(
  dir: string,
  version: string,
  scenario: Scenario,
  outcome: ScenarioOutcome,
  bodies: RecordedBody[],
  found: { telemetry: Seen[] | null; transcript: Seen[] | null; imported: Seen[] | null },
  expected: { telemetry: Seen[]; transcript: Seen[] },
): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const otlp = bodies.map((b, i) => {
    const signal = signalOf(b.path);
    const ext = b.contentType.includes('json') ? 'json' : 'pb';
    const keep = signal === 'traces' || signal === 'logs';
    const file = keep ? `${String(i + 1).padStart(3, '0')}-${signal}.${ext}.br` : null;
    if (file) writeFileSync(join(dir, file), compress(b.body));
    return {
      file,
      path: b.path,
      contentType: b.contentType,
      contentEncoding: b.contentEncoding,
      bytes: b.body.length,
      status: b.status,
    };
  });
  const transcripts = outcome.transcripts.map((t) => {
    const file = join('transcripts', `${t.name}.br`);
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), compress(readFileSync(t.path)));
    return file;
  });
  const matches = (a: Seen[] | null, b: Seen[]) => a !== null && sameSeen(a, b);
  const capture = {
    claudeCode: version,
    scenario: { id: scenario.id, name: scenario.name },
    capturedAt: new Date().toISOString(),
    isolatedNetwork: outcome.runs[0]?.isolated ?? null,
    sessionId: outcome.sessionId,
    runs: scenario.runs.map((r, i) => ({
      prompt: r.prompt,
      resume: r.resume === true,
      exitCode: outcome.runs[i]?.exitCode ?? null,
    })),
    options: {
      model: scenario.options.model ?? null,
      protocol: scenario.options.protocol ?? 'http/json',
      betaTracing: scenario.options.betaTracing === true,
    },
    api: outcome.requests,
    otlp,
    transcripts,
    expected,
    found,
    matches: {
      telemetry: matches(found.telemetry, expected.telemetry),
      transcript: matches(found.transcript, expected.transcript),
      import: matches(found.imported, found.transcript ?? expected.transcript),
    },
  };
  writeFileSync(join(dir, 'capture.json'), JSON.stringify(capture, null, 2) + '\n');
}

function sizeOf(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, e) => n + sizeOf(join(path, e)), 0);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  // the only step that needs the network: before the guard
  const binaries = new Map<string, string>();
  for (const version of args.versions)
    binaries.set(
      version,
      installClaudeCode(version, (line) => console.log(line)),
    );
  if (args.installOnly) {
    for (const [version, binary] of binaries) console.log(`Claude Code ${version}: ${binary}`);
    return 0;
  }

  // from here on nothing may reach past loopback, as in the tests (Node children included)
  await import(new URL('../test/helpers/network-guard.mjs', import.meta.url).href);
  const scenarios = SCENARIOS.filter((s) => args.only === null || args.only.includes(s.id));
  if (scenarios.length === 0)
    throw new Error(
      `no scenario ${args.only?.join(',')}: ${SCENARIOS.map((s) => s.id).join(', ')}`,
    );

  const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-capture-'));
  const server = await startChildServer({
    ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
    ROTSCOPE_FROM_SOURCE: '1',
    ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
  });
  let allMatch = true;
  try {
    for (const [version, binary] of binaries) {
      const versionDir = join(args.out, version);
      if (args.only === null) rmSync(versionDir, { recursive: true, force: true });
      console.log(
        `\nClaude Code ${version} (${binary}; network ${canIsolateNetwork() ? 'namespace: loopback only' : 'NOT isolated: no unshare -n here'})`,
      );
      const results: Array<{
        scenario: Scenario;
        outcome: ScenarioOutcome;
        bodies: RecordedBody[];
      }> = [];
      for (const scenario of scenarios) {
        const started = Date.now();
        const recorder = await startOtlpRecorder(server.url);
        let outcome: ScenarioOutcome;
        try {
          outcome = await runScenario(scenario, {
            binary,
            serverUrl: server.url,
            otlpUrl: recorder.url,
            copyTo: join(tmp, 'transcripts', version, scenario.id),
          });
        } finally {
          await recorder.close();
        }
        results.push({ scenario, outcome, bodies: recorder.bodies });
        console.log(`  ran ${scenario.id} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }

      const ran = results.filter((r) => r.outcome.analyze?.code === 0);
      const imported = await importAndEvaluate(
        ran.flatMap((r) => r.outcome.transcripts.filter((t) => !t.subagent).map((t) => t.path)),
        new Map(ran.map((r) => [r.outcome.sessionId!, r.outcome.analyze!.findings.length])),
        join(tmp, `imported-${version}`),
      );
      if (imported.code !== 0) console.log(`  rotscope import failed: ${imported.stderr.trim()}`);

      const rows: string[][] = [['scenario', 'telemetry', 'transcript', 'import']];
      for (const { scenario, outcome, bodies } of results) {
        const expected = {
          telemetry: scenario.telemetry,
          transcript: expectedFromTranscript(scenario),
        };
        const found = {
          telemetry: outcome.telemetry,
          transcript: outcome.analyze?.code === 0 ? outcome.analyze.findings : null,
          imported:
            outcome.sessionId === null ? null : (imported.findings.get(outcome.sessionId) ?? null),
        };
        writeScenarioFixtures(
          join(versionDir, scenario.id),
          version,
          scenario,
          outcome,
          bodies,
          found,
          expected,
        );
        const cell = (got: Seen[] | null, want: Seen[]) => {
          if (got === null) return 'NOT RUN';
          if (sameSeen(got, want)) return `ok: ${describeSeen(got)}`;
          allMatch = false;
          return `DIFFERS: ${describeSeen(got)} (expected ${describeSeen(want)})`;
        };
        if (!outcome.ran) {
          allMatch = false;
          const failed = outcome.runs.find((r) => r.exitCode !== 0);
          console.log(
            `  ${scenario.id}: the CLI did not run through (exit ${failed?.exitCode ?? '?'}): ${(failed?.stderr ?? '').trim().slice(0, 400)}`,
          );
        }
        rows.push([
          scenario.id,
          cell(found.telemetry, expected.telemetry),
          cell(found.transcript, expected.transcript),
          // import must agree with analyze of the same transcript
          found.transcript === null ? 'NOT RUN' : cell(found.imported, found.transcript),
        ]);
      }
      const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
      for (const r of rows) console.log('  ' + r.map((v, c) => v.padEnd(widths[c]!)).join('  '));
      const kb = Math.round(sizeOf(versionDir) / 1024);
      console.log(`  fixtures: ${relative(ROOT, versionDir)}/ (${kb} KB)`);
      if (kb > 400) console.log('  warning: over 400 KB; keep the checked-in fixtures small');
      writeFileSync(join(versionDir, 'README.md'), versionReadme(version, results, rows));
    }
  } finally {
    server.process.kill('SIGTERM');
    await server.exited;
    rmSync(tmp, { recursive: true, force: true });
  }

  const unverified = args.versions.filter((v) => !VERIFIED_CLAUDE_CODE_VERSIONS.includes(v));
  if (allMatch && unverified.length > 0)
    console.log(
      `\nEvery scenario matched on ${unverified.join(', ')}: to mark it verified, add it to ` +
        "test/e2e/claude-code-real/versions.json (newest last) and to the README's Claude Code section.",
    );
  if (!allMatch)
    console.log(
      `\nSome findings differ from the expected ones. If this is a release newer than ${NEWEST_VERIFIED_CLAUDE_CODE}, ` +
        'open an issue with this summary and the captures under test/fixtures/claude-code/.',
    );
  return allMatch ? 0 : 1;
}

function versionReadme(
  version: string,
  results: Array<{ scenario: Scenario; outcome: ScenarioOutcome }>,
  rows: string[][],
): string {
  const cell = (v: string) => v.replace(/\|/g, '\\|');
  const lines = [
    `# Captured from the real Claude Code CLI ${version}`,
    '',
    'Written by `npm run capture:claude-code -- ' +
      version +
      '` (scripts/capture-claude-code.ts): the real',
    `\`@anthropic-ai/claude-code@${version}\` binary, run offline (in a private network namespace where`,
    '`unshare -n` works) against the loopback fake of the Messages API (test/helpers/fake-anthropic.ts),',
    'through the real-CLI scenarios (test/e2e/claude-code-real/scenarios.ts). Token counts are what the',
    'fake reported; everything else (span and event names, attributes, timing, transcript lines) is the',
    `CLI's own. Captured ${new Date().toISOString().slice(0, 10)}${results[0]?.outcome.runs[0]?.isolated === false ? ' (network NOT isolated: no `unshare -n`)' : ''}. Do not edit: capture again instead.`,
    '',
    'Each folder is one scenario: `NNN-traces|logs.json|pb.br` are the OTLP bodies in the order they',
    'arrived (the transport gzip removed; the numbers skip the metrics bodies, which are dropped),',
    "`transcripts/` the session files the CLI wrote, and `capture.json` the fake API's request log,",
    'the expected findings and what rotscope found (from telemetry, from the transcript with',
    '`rotscope analyze`, and with `rotscope import`). The `.br` files are brotli-compressed (a 16 MB',
    'window: 2.1.332 repeats a ~100 KB system prompt snapshot in its transcripts); read one with',
    '`zlib.brotliDecompressSync(fs.readFileSync(path))`.',
    '',
    '| folder | scenario | session |',
    '|---|---|---|',
    ...results.map(
      ({ scenario, outcome }) =>
        `| \`${scenario.id}/\` | ${cell(scenario.name)} | \`${outcome.sessionId ?? 'did not run'}\` |`,
    ),
    '',
    'What rotscope found when they were captured (`ok`: the expected findings; import is compared',
    'with analyze of the same transcript):',
    '',
    `| ${rows[0]!.join(' | ')} |`,
    `|${rows[0]!.map(() => '---').join('|')}|`,
    ...rows.slice(1).map((r) => `| ${r.map(cell).join(' | ')} |`),
    '',
  ];
  return lines.join('\n');
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
