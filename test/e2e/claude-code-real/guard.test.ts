/**
 * The tool-result guard with the REAL Claude Code CLI (issue 25 §3), on every verified version:
 * the CLI runs offline against the fake Messages API with the hooks `rotscope claude-code install`
 * writes (bin/rotscope-guard.cjs on PreToolUse:Read and PostToolUse), its telemetry to a real
 * `rotscope serve`. What reaches the model is read off the fake's requests:
 * - a whole-file Read of a large file is narrowed, and the model's next request carries the
 *   guard's message and only the lines that fit;
 * - a large Bash result gets the guard's message, the result itself whole;
 * - small results pass untouched and the guard writes nothing;
 * - the same session without the guard raises `tool_takeover`, with it does not;
 * - with the default config (no budgets: the detector's rule), a newcomer's Read sequence of
 *   middle-sized files (none near 30% of the window) is a takeover without the guard and none
 *   with it, and the user's transcript carries the guard's one line (`hook_system_message`).
 * The tokens kept out of the context per scenario are printed (and come from the guard's log).
 * PGlite only, like the other real-CLI suites.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildServer } from '../../helpers/child-server.ts';
import {
  claudeCodeBinary,
  claudeCodeVersionsToTest,
  installHint,
} from '../../helpers/claude-code-cli.ts';
import type { FakeRequest } from '../../helpers/fake-anthropic.ts';
import { runScenario, startScenarioServer, type ScenarioOutcome } from './run-scenario.ts';
import { bigText, seenFinding, type Scenario } from './scenarios.ts';

const GUARD = fileURLToPath(new URL('../../../bin/rotscope-guard.cjs', import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/rotscope.js', import.meta.url));
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CLAUDE_CODE === '1';
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-guard-'));
let server: ChildServer;

/**
 * The hooks install writes for the guard (src/cli/claude-code-install.ts GUARD_EVENTS), and its
 * SessionStart hook (which sends where the session runs: the conversation's project).
 */
const guardHooks = () => {
  const command = `"${process.execPath}" "${GUARD}"`;
  const hook = `"${process.execPath}" "${BIN}" hook`;
  return {
    hooks: {
      SessionStart: [{ matcher: '', hooks: [{ type: 'command', command: hook, timeout: 10 }] }],
      PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command, timeout: 5 }] }],
      PostToolUse: [{ matcher: '', hooks: [{ type: 'command', command, timeout: 5 }] }],
    },
  };
};

/** Per run: the guard's own config and log, outside the CLI's temp dir so they outlive it. */
function guardEnv(name: string, config: object): Record<string, string> {
  const configFile = join(tmp, `${name}.guard.json`);
  writeFileSync(configFile, JSON.stringify(config));
  return {
    ROTSCOPE_GUARD_CONFIG: configFile,
    ROTSCOPE_GUARD_LOG: join(tmp, `${name}.guard.log`),
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    // the guard's spans go where the CLI's telemetry goes (the relay into its private network)
    ROTSCOPE_URL: 'http://127.0.0.1:{{otlp}}',
  };
}
const guardLog = (env: Record<string, string>) =>
  existsSync(env.ROTSCOPE_GUARD_LOG!) ? readFileSync(env.ROTSCOPE_GUARD_LOG!, 'utf8') : '';
const keptOut = (log: string) =>
  [...log.matchAll(/kept_out=([\d,]+)/g)].reduce(
    (sum, m) => sum + Number(m[1]!.replace(/,/g, '')),
    0,
  );
const mainRequests = (requests: FakeRequest[]) => requests.filter((r) => r.kind === 'main');

const estimate = { estimate: true } as const;
/** The text of the last tool result in a request (what the model got from the tool). */
function lastToolResult(request: FakeRequest): string {
  const body = JSON.parse(request.body ?? '{}') as {
    messages?: Array<{ role: string; content: unknown }>;
  };
  const results = (body.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []))
    .filter((block) => block.type === 'tool_result');
  const content = results.at(-1)?.content;
  return typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : '';
}

/**
 * Two 80 KB reads (about 20k tokens each), two small commands and a text: without the guard the
 * reads hold most of every later call's input, a takeover by Read (as in scenarios.ts).
 */
function readsScenario(id: string, env: Record<string, string>, guarded: boolean): Scenario {
  return {
    id,
    name: id,
    options: {
      files: { 'big1.txt': bigText('alpha', 80), 'big2.txt': bigText('beta', 80) },
      env,
      ...(guarded ? { settings: guardHooks() } : {}),
    },
    runs: [{ prompt: 'Read big1.txt and big2.txt and tell me what they are.' }],
    script: {
      main: [
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/big1.txt' } }, usage: estimate },
        { toolUse: { name: 'Read', input: { file_path: '__WORK__/big2.txt' } }, usage: estimate },
        {
          toolUse: { name: 'Bash', input: { command: 'wc -l big1.txt', description: 'Count' } },
          usage: estimate,
        },
        {
          toolUse: { name: 'Bash', input: { command: 'wc -c big2.txt', description: 'Size' } },
          usage: estimate,
        },
        { text: 'Both are logs of lorem ipsum.', usage: estimate },
      ],
    },
    telemetry: [],
  };
}

/**
 * A newcomer's first look at a project: five Reads of files from 3 to 24 KB (none alone near 30%
 * of a 200k window, so a budget per result never acts), then an answer. Without the guard the
 * reads are most of every later input: a takeover by Read.
 */
function newcomerScenario(id: string, env: Record<string, string>, guarded: boolean): Scenario {
  const files = {
    'README.md': bigText('readme', 12),
    'package.json': bigText('"dep"', 3),
    'src/index.ts': bigText('export', 20),
    'src/server.ts': bigText('route', 16),
    'docs/guide.md': bigText('guide', 24),
  };
  return {
    id,
    name: id,
    options: { files, env, ...(guarded ? { settings: guardHooks() } : {}) },
    runs: [{ prompt: 'I am new here: read the README, package.json, the sources and the guide.' }],
    script: {
      main: [
        ...Object.keys(files).map((name) => ({
          toolUse: { name: 'Read', input: { file_path: `__WORK__/${name}` } },
          usage: estimate,
        })),
        { text: 'A small service with a guide.', usage: estimate },
      ],
    },
    telemetry: [],
  };
}

/** The lines the user saw from hooks: the transcript's `hook_system_message` attachments. */
function hookLines(outcome: ScenarioOutcome): string[] {
  const main = outcome.transcripts.find((t) => !t.subagent);
  if (!main) return [];
  return readFileSync(main.path, 'utf8')
    .split('\n')
    .filter((line) => line.includes('hook_system_message'))
    .map((line) => {
      const entry = JSON.parse(line) as { attachment?: { type?: string; content?: string } };
      return entry.attachment?.type === 'hook_system_message'
        ? (entry.attachment.content ?? '')
        : '';
    })
    .filter((text) => text !== '');
}

/** `cat app.log` of a `log` the size the caller picks, then a text; with or without the guard. */
function catScenario(
  id: string,
  log: string,
  env: Record<string, string>,
  guarded: boolean,
): Scenario {
  return {
    id,
    name: id,
    options: { files: { 'app.log': log }, env, ...(guarded ? { settings: guardHooks() } : {}) },
    runs: [{ prompt: 'Show me app.log.' }],
    script: {
      main: [
        {
          toolUse: { name: 'Bash', input: { command: 'cat app.log', description: 'Show the log' } },
          usage: estimate,
        },
        { text: 'It is a log.', usage: estimate },
      ],
    },
    telemetry: [],
  };
}

describe.skipIf(!onThisBackend)('the tool-result guard with the real Claude Code CLI', () => {
  beforeAll(async () => {
    server = await startScenarioServer(join(tmp, 'serve'));
  }, 90_000);
  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const version of claudeCodeVersionsToTest()) {
    const binary = claudeCodeBinary(version);
    describe(`Claude Code ${version}`, () => {
      if (!binary && !required) {
        it.skip(`skipped: ${installHint(version)}`, () => {});
        return;
      }
      const run = async (scenario: Scenario): Promise<ScenarioOutcome> => {
        expect(binary, `ROTSCOPE_REQUIRE_CLAUDE_CODE=1 and ${installHint(version)}`).not.toBe(null);
        const outcome = await runScenario(scenario, {
          binary: binary!,
          serverUrl: server.url,
          copyTo: join(tmp, 'transcripts', version, scenario.id),
        });
        for (const r of outcome.runs) expect(r.exitCode, r.stderr + r.stdout).toBe(0);
        expect(outcome.ran).toBe(true);
        return outcome;
      };

      it('narrows whole-file Reads over the budget; without the guard the same session is a takeover', async () => {
        // A budget of 2,000 tokens per Read (the guard's config), so the reads stay a small share.
        const env = guardEnv(`narrow-${version}`, { budgets: { Read: 2_000 } });
        const guarded = await run(readsScenario(`guarded-${version}`, env, true));
        const requests = mainRequests(guarded.requests);
        expect(requests).toHaveLength(5);
        // The request after each Read carries the guard's message and only the lines that fit.
        for (const [index, name] of [
          [1, 'big1.txt'],
          [2, 'big2.txt'],
        ] as const) {
          const body = requests[index]!.body ?? '';
          expect(body).toContain(`rotscope guard: ${name} is 80 KB`);
          expect(body).toContain('so only lines 1-');
        }
        const unguarded = await run(
          readsScenario(`unguarded-${version}`, guardEnv(`none-${version}`, {}), false),
        );
        const unguardedRequests = mainRequests(unguarded.requests);
        // What the guard kept out: every later request is about 150 KB smaller.
        expect(unguardedRequests[4]!.bodyBytes - requests[4]!.bodyBytes).toBeGreaterThan(140_000);
        const log = guardLog(env);
        expect(log.match(/ {2}narrowed {2}Read {2}/g)).toHaveLength(2);
        console.log(
          `Claude Code ${version}: the guard kept about ${keptOut(log).toLocaleString('en-US')} tokens ` +
            `out of the context (last request ${unguardedRequests[4]!.bodyBytes} → ${requests[4]!.bodyBytes} bytes)`,
        );
        // The server has what the guard did in that session, for the console's list.
        const detail = (await (
          await fetch(`${server.url}/api/conversations/${guarded.sessionId}`)
        ).json()) as {
          guard: { narrowed: number; warned: number; keptOutTokens: number } | null;
          project: string | null;
        };
        expect(detail.guard).toMatchObject({ narrowed: 2, warned: 0 });
        // the SessionStart hook sent the CLI's working directory (the scenario's work folder)
        expect(detail.project).toMatch(/\/work$/);
        expect(detail.guard!.keptOutTokens).toBe(keptOut(log));
        // The detector's verdict on each: the same session is a takeover only without the guard.
        expect(unguarded.telemetry).toEqual([
          seenFinding('tool_takeover', 'warning', null, 'Read'),
        ]);
        expect(guarded.telemetry).toEqual([]);
      }, 300_000);

      it("with the default budget, a newcomer's Read sequence is narrowed where the detector would fire: no takeover, and the user sees why", async () => {
        const env = guardEnv(`newcomer-${version}`, {});
        const guarded = await run(newcomerScenario(`newcomer-${version}`, env, true));
        const unguarded = await run(
          newcomerScenario(
            `newcomer-plain-${version}`,
            guardEnv(`newcomer-none-${version}`, {}),
            false,
          ),
        );
        // The detector's verdict: a takeover by Read without the guard, nothing with it.
        expect(unguarded.telemetry).toEqual([
          seenFinding('tool_takeover', 'warning', null, 'Read'),
        ]);
        expect(guarded.telemetry).toEqual([]);
        const log = guardLog(env);
        const narrowed = log.match(/ {2}narrowed {2}Read {2}/g) ?? [];
        expect(narrowed.length).toBeGreaterThan(0);
        // One short line per decision reached the user's session, naming the file and the share.
        const lines = hookLines(guarded);
        expect(lines, `${log}\n${JSON.stringify(lines, null, 1)}`).toHaveLength(narrowed.length);
        for (const line of lines) {
          expect(line).toMatch(
            /^rotscope guard: read (line 1|lines 1-\d+) of [\w.]+ \(about [\d,]+ tokens kept out; Read results at \d+% of the context\)$/,
          );
          expect(line.length).toBeLessThan(160);
        }
        const detail = (await (
          await fetch(`${server.url}/api/conversations/${guarded.sessionId}`)
        ).json()) as { guard: { narrowed: number } | null };
        expect(detail.guard?.narrowed).toBe(narrowed.length);
        console.log(
          `Claude Code ${version}: newcomer's reads, ${narrowed.length} narrowed, about ` +
            `${keptOut(log).toLocaleString('en-US')} tokens kept out; user saw: ${lines.join(' | ')}`,
        );
      }, 300_000);

      it('tells the model about a large Bash result and leaves the result whole', async () => {
        const env = guardEnv(`bash-${version}`, { budgets: { Bash: 2_000 } });
        const log = bigText('INFO', 24);
        const outcome = await run(catScenario(`bash-${version}`, log, env, true));
        const after = mainRequests(outcome.requests)[1]!;
        expect(after.body).toContain('rotscope guard: this Bash result is about');
        // The result reached the model as it does without the guard: not a byte changed.
        const plain = await run(
          catScenario(`bash-plain-${version}`, log, guardEnv(`bash-plain-${version}`, {}), false),
        );
        const plainResult = lastToolResult(mainRequests(plain.requests)[1]!);
        expect(plainResult.length).toBeGreaterThan(20_000);
        expect(lastToolResult(after)).toBe(plainResult);
        expect(guardLog(env)).toMatch(/ {2}warned {2}Bash {2}/);
        console.log(
          `Claude Code ${version}: large Bash result warned, 0 tokens kept out (it stays)`,
        );
      }, 240_000);

      it('passes small results untouched and writes nothing', async () => {
        const env = guardEnv(`small-${version}`, {});
        const outcome = await run({
          id: `small-${version}`,
          name: 'small',
          options: { files: { 'notes.txt': 'TODO\n- one\n- two\n' }, env, settings: guardHooks() },
          runs: [{ prompt: 'Read notes.txt and count the lines.' }],
          script: {
            main: [
              {
                toolUse: { name: 'Read', input: { file_path: '__WORK__/notes.txt' } },
                usage: estimate,
              },
              {
                toolUse: {
                  name: 'Bash',
                  input: { command: 'wc -l notes.txt', description: 'Count' },
                },
                usage: estimate,
              },
              { text: 'Three lines.', usage: estimate },
            ],
          },
          telemetry: [],
        });
        for (const request of mainRequests(outcome.requests))
          expect(request.body).not.toContain('rotscope guard');
        expect(existsSync(env.ROTSCOPE_GUARD_LOG!)).toBe(false);
        console.log(`Claude Code ${version}: small results passed, 0 tokens kept out`);
      }, 240_000);
    });
  }
});
