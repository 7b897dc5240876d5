/**
 * The token out of settings.json (issue 36 §2), with the REAL Claude Code CLI: a `rotscope serve`
 * that has a token (so ingest without one is refused, 401), and the settings
 * `rotscope claude-code install --token` writes, where the token is only in a 0600 file that
 * Claude Code's `otelHeadersHelper` reads. The CLI's session, offline against the fake Messages
 * API, reaches the server: its conversation is stored, which it could not be without the
 * Authorization header the helper printed. PGlite only, like the other real-CLI suites.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import {
  claudeCodeBinary,
  claudeCodeVersionsToTest,
  installHint,
  startClaudeCodeSession,
} from '../../helpers/claude-code-cli.ts';
import { rotscope } from './run-scenario.ts';

const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CLAUDE_CODE === '1';
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-token-helper-'));
const TOKEN = 'rs_admin_token_helper_0123456789abcdef';
const INSTALL_URL = 'http://127.0.0.1:4318';
let server: ChildServer;
let installed: { settings: Record<string, unknown>; env: Record<string, string> };

const versions = claudeCodeVersionsToTest();

describe.skipIf(!onThisBackend || versions.length === 0)(
  'the real Claude Code CLI sends the token its otelHeadersHelper prints',
  () => {
    beforeAll(async () => {
      server = await startChildServer({
        ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        ROTSCOPE_BOOTSTRAP_TOKEN: TOKEN,
        ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
        ROTSCOPE_EVALUATOR_QUIET_MS: '200',
      });
      const config = join(tmp, 'claude-config');
      const done = await rotscope(
        ['claude-code', 'install', '--user', '--url', INSTALL_URL, '--token', TOKEN, '--no-guard'],
        { CLAUDE_CONFIG_DIR: config, HOME: tmp },
      );
      expect(done.code, done.stderr).toBe(0);
      const file = join(config, 'settings.json');
      expect(readFileSync(file, 'utf8')).not.toContain(TOKEN);
      expect(statSync(`${file}.rotscope-token`).mode & 0o777).toBe(0o600);
      const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(settings.otelHeadersHelper).toMatch(/rotscope-otel-headers\.cjs" "/);
      // the env as the session helper takes it: the install URL replaced by the relay's
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

    it('ingest without the token is refused (the check below can fail)', async () => {
      const res = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceSpans: [] }),
      });
      expect(res.status).toBe(401);
    });

    for (const version of versions) {
      const binary = claudeCodeBinary(version);
      it(`Claude Code ${version}: the session is stored`, { timeout: 180_000 }, async (ctx) => {
        if (!binary && !required) return ctx.skip(installHint(version));
        expect(binary, installHint(version)).not.toBe(null);
        const session = await startClaudeCodeSession({
          binary: binary!,
          otlpUrl: server.url,
          protocol: 'http/protobuf',
          script: { main: [{ text: 'Done.' }] },
          settings: installed.settings,
          env: { ...installed.env, ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1' },
        });
        try {
          const run = await session.run('Say done.');
          expect(run.exitCode, run.stderr).toBe(0);
          expect(run.sessionId).toBeTruthy();
          let found = false;
          for (let i = 0; i < 60 && !found; i++) {
            const res = await fetch(`${server.url}/api/conversations?q=${run.sessionId}`, {
              headers: { authorization: `Bearer ${TOKEN}` },
            });
            const body = (await res.json()) as { items?: Array<{ id: string }> };
            found = (body.items ?? []).some((c) => c.id === run.sessionId);
            if (!found) await new Promise((r) => setTimeout(r, 500));
          }
          expect(found, server.output().slice(-2000)).toBe(true);
        } finally {
          await session.close();
        }
      });
    }
  },
);
