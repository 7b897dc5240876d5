/**
 * No model judged blind (issue 34 §3), with the REAL Claude Code CLI 2.1.332 (or newer, when
 * ROTSCOPE_CLAUDE_CODE_VERSIONS names one): `rotscope serve` and the settings `rotscope
 * claude-code install` writes (its status line, hooks, guard and telemetry env, the URL pointed at
 * the relay into the CLI's private network), the CLI offline against the fake Messages API. Its
 * aliases run models of its own: `--model sonnet` is `claude-sonnet-5-5`, `--model haiku` is
 * `claude-haiku-5-5`, each with the 1,000,000-token window the CLI itself reports
 * (`modelUsage[model].contextWindow` in its result JSON, read here too). So:
 * - a sonnet session at 91% of that window raises `context_too_full` critical;
 * - a haiku session at 75% raises it as a warning;
 * - a sonnet session at 18% (180,000 tokens; a 200k guess would call it 90%) raises nothing;
 * - each conversation's `fullestShare` (GET /api/conversations) is its tokens over the CLI's own
 *   window, within 0.02.
 * One server for the three sessions. PGlite only, like the other real-CLI suites; a version older
 * than 2.1.332 (whose aliases name other models) is not run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildServer } from '../../helpers/child-server.ts';
import {
  claudeCodeBinary,
  claudeCodeVersionsToTest,
  installHint,
} from '../../helpers/claude-code-cli.ts';
import type { FakeUsage } from '../../helpers/fake-anthropic.ts';
import { compareVersions } from '../../../src/model/window-catalog.ts';
import { rotscope, runScenario, sorted, startScenarioServer } from './run-scenario.ts';
import { seenFinding as f, type Scenario, type Seen } from './scenarios.ts';

const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CLAUDE_CODE === '1';
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-windows-'));
let server: ChildServer;
/** What `rotscope claude-code install` wrote: settings (status line, hooks) and their env. */
let installed: { settings: Record<string, unknown>; env: Record<string, string> };

/** The URL the install is given, replaced by the relay's in the CLI's network. */
const INSTALL_URL = 'http://127.0.0.1:4318';
const WINDOW = 1_000_000;

/** Usage of one answer whose context is `context` tokens, with a warm cache. */
const usage = (context: number): FakeUsage => ({
  input_tokens: 8,
  cache_read_input_tokens: context - 1_008,
  cache_creation_input_tokens: 1_000,
  output_tokens: 40,
});

/** A session of `alias` whose last call holds `tokens`: one tool call, then the answer. */
function session(
  id: string,
  alias: 'sonnet' | 'haiku',
  model: string,
  tokens: number,
  telemetry: Seen[],
): Scenario & { model: string; tokens: number } {
  return {
    id,
    name: `--model ${alias} (${model}) at ${Math.round((tokens / WINDOW) * 100)}% of its 1M window`,
    model,
    tokens,
    options: {
      model: alias,
      settings: installed.settings,
      env: { ...installed.env, ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1' },
    },
    runs: [{ prompt: 'Check the build, then report.' }],
    script: {
      main: [
        {
          toolUse: { name: 'Bash', input: { command: 'echo ok', description: 'Check' } },
          usage: usage(Math.round(tokens / 2)),
        },
        { text: 'The build is fine.', usage: usage(tokens) },
      ],
    },
    telemetry,
  };
}

/** The conversation's row in GET /api/conversations. */
async function conversation(sessionId: string): Promise<{ fullestShare: number | null }> {
  const res = await fetch(`${server.url}/api/conversations?q=${sessionId}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as {
    items: Array<{ id: string; fullestShare: number | null }>;
  };
  const row = body.items.find((c) => c.id === sessionId);
  expect(row, JSON.stringify(body)).toBeDefined();
  return row!;
}

const versions = claudeCodeVersionsToTest().filter(
  (v) => (compareVersions(v, '2.1.332') ?? -1) >= 0,
);

describe.skipIf(!onThisBackend || versions.length === 0)(
  "the real Claude Code CLI's own windows (issue 34)",
  () => {
    beforeAll(async () => {
      server = await startScenarioServer(join(tmp, 'serve'));
      const config = join(tmp, 'claude-config');
      const done = await rotscope(['claude-code', 'install', '--user', '--url', INSTALL_URL], {
        CLAUDE_CONFIG_DIR: config,
        HOME: tmp,
      });
      expect(done.code, done.stderr).toBe(0);
      const settings = JSON.parse(readFileSync(join(config, 'settings.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const env = Object.fromEntries(
        Object.entries((settings.env ?? {}) as Record<string, string>).map(([k, v]) => [
          k,
          v.split(INSTALL_URL).join('http://127.0.0.1:{{otlp}}'),
        ]),
      );
      delete settings.env;
      installed = { settings, env };
    }, 90_000);

    afterAll(async () => {
      server?.process.kill('SIGTERM');
      await server?.exited;
      rmSync(tmp, { recursive: true, force: true });
    });

    for (const version of versions) {
      const binary = claudeCodeBinary(version);
      describe(`Claude Code ${version}`, () => {
        if (!binary && !required) {
          it.skip(`skipped: ${installHint(version)}`, () => {});
          return;
        }
        it('sonnet at 91% is critical, haiku at 75% a warning, sonnet at 18% nothing; fullestShare over the 1M window', async () => {
          expect(binary, `ROTSCOPE_REQUIRE_CLAUDE_CODE=1 and ${installHint(version)}`).not.toBe(
            null,
          );
          const sessions = [
            session('sonnet-91', 'sonnet', 'claude-sonnet-5-5', 910_000, [
              f('context_too_full', 'critical'),
            ]),
            session('haiku-75', 'haiku', 'claude-haiku-5-5', 750_000, [
              f('context_too_full', 'warning'),
            ]),
            session('sonnet-18', 'sonnet', 'claude-sonnet-5-5', 180_000, []),
          ];
          // the three sessions at once: their findings settle together
          const outcomes = await Promise.all(
            sessions.map((s) =>
              runScenario(s, {
                binary: binary!,
                serverUrl: server.url,
                copyTo: join(tmp, 'transcripts', version, s.id),
              }),
            ),
          );
          for (const [i, outcome] of outcomes.entries()) {
            const s = sessions[i]!;
            for (const run of outcome.runs) expect(run.exitCode, run.stderr + run.stdout).toBe(0);
            expect(outcome.ran, s.name).toBe(true);
            // what the CLI itself says: the model the alias runs, and its window
            const result = JSON.parse(outcome.runs[0]!.stdout.trim().split('\n').pop()!) as {
              modelUsage: Record<string, { contextWindow: number }>;
            };
            expect(Object.keys(result.modelUsage), s.name).toEqual([s.model]);
            expect(result.modelUsage[s.model]!.contextWindow, s.name).toBe(WINDOW);
            expect(
              outcome.requests.filter((r) => r.kind === 'main').map((r) => r.model),
              s.name,
            ).toEqual([s.model, s.model]);

            expect(sorted(outcome.telemetry!), s.name).toEqual(sorted(s.telemetry));
            const { fullestShare } = await conversation(outcome.sessionId!);
            expect(fullestShare, s.name).not.toBeNull();
            expect(Math.abs(fullestShare! - s.tokens / WINDOW), s.name).toBeLessThanOrEqual(0.02);
          }
          // Coverage names no model without a window, and its context_too_full hint no such model
          const coverage = (await (await fetch(`${server.url}/api/coverage`)).json()) as {
            windowsUnknown: Array<{ model: string }>;
            detectors: Record<string, { hint?: string }>;
          };
          expect(coverage.windowsUnknown).toEqual([]);
          expect(coverage.detectors.context_too_full?.hint ?? '').not.toMatch(/no window known/);
        }, 180_000);
      });
    }
  },
);
