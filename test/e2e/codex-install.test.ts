/**
 * `rotscope codex install` as a user runs it (the real bin/rotscope.js, child processes): the
 * `[otel]` section of `$CODEX_HOME/config.toml` merged with what is there (the rest of the file
 * byte for byte, comments too), a backup first, idempotent, `--dry-run` shows the diff and
 * writes nothing, `--uninstall` puts the file back as it was; `--help` works; a file that is not
 * TOML is left alone. That the real Codex binary takes what install writes is
 * test/e2e/codex-real's (its sessions are configured by this command).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-codex-install-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user's own config.toml: a model, their own collector, a profile, comments. */
const USER_CONFIG = `# my Codex settings
model = "gpt-5.5"
approval_policy = "on-request"

[otel]
environment = "prod"
log_user_prompt = false
exporter = { otlp-http = { endpoint = "https://collector.example/v1/logs", protocol = "binary" } }

# a faster profile
[profiles.fast]
model = "gpt-5.5"
model_reasoning_effort = "low"
`;

type Table = Record<string, unknown>;
const toml = (file: string) => parse(readFileSync(file, 'utf8')) as Table;
const otel = (file: string) => toml(file).otel as Table;

describe('rotscope codex install (the program)', { timeout: 240_000 }, () => {
  it('merges [otel] into $CODEX_HOME/config.toml with a backup, idempotently; --uninstall restores', async () => {
    const home = path.join(dir, 'codex');
    mkdirSync(home);
    const file = path.join(home, 'config.toml');
    writeFileSync(file, USER_CONFIG);
    const env = { CODEX_HOME: home, ROTSCOPE_URL: '', ROTSCOPE_TOKEN: '' };
    const args = ['codex', 'install', '--url', 'http://127.0.0.1:4318/', '--token', 'rs_test'];

    const dry = await runCli([...args, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`--- ${file}`);
    expect(dry.stdout).toMatch(/^\+ endpoint = "http:\/\/127\.0\.0\.1:4318\/v1\/traces"$/m);
    expect(dry.stdout).toMatch(/^- exporter = \{ otlp-http = \{ endpoint = "https:\/\/collector/m);
    expect(readFileSync(file, 'utf8')).toBe(USER_CONFIG); // nothing written
    expect(readdirSync(home)).toEqual(['config.toml']);

    const first = await runCli(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      'warning: this replaces your exporter: [otel] exporter = otlp-http https://collector.example/v1/logs',
    );
    const installed = readFileSync(file, 'utf8');
    expect(otel(file)).toEqual({
      environment: 'prod',
      log_user_prompt: false,
      exporter: {
        'otlp-http': {
          endpoint: 'http://127.0.0.1:4318/v1/logs',
          protocol: 'binary',
          headers: { authorization: 'Bearer rs_test' },
        },
      },
      trace_exporter: {
        'otlp-http': {
          endpoint: 'http://127.0.0.1:4318/v1/traces',
          protocol: 'binary',
          headers: { authorization: 'Bearer rs_test' },
        },
      },
    });
    // the rest as the user wrote it, comments included
    const { otel: _mine, ...rest } = toml(file);
    const { otel: _theirs, ...userRest } = parse(USER_CONFIG) as Table;
    expect(rest).toEqual(userRest);
    expect(installed).toContain('# my Codex settings\nmodel = "gpt-5.5"');
    expect(installed).toContain('# a faster profile\n[profiles.fast]');
    const backups = readdirSync(home).filter((n) => n.startsWith('config.toml.rotscope-backup'));
    expect(backups).toHaveLength(1);
    expect(readFileSync(path.join(home, backups[0]!), 'utf8')).toBe(USER_CONFIG);

    const again = await runCli(args, { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already installed, nothing to change');
    expect(readFileSync(file, 'utf8')).toBe(installed);
    expect(readdirSync(home).filter((n) => n.includes('backup'))).toHaveLength(1);

    const dryUndo = await runCli(['codex', 'install', '--uninstall', '--dry-run'], { env });
    expect(dryUndo.code).toBe(0);
    expect(dryUndo.stdout).toMatch(/^- \[otel\.trace_exporter\.otlp-http\]$/m);
    expect(readFileSync(file, 'utf8')).toBe(installed);

    const undo = await runCli(['codex', 'install', '--uninstall'], { env });
    expect(undo.code, undo.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(USER_CONFIG);
    const undoAgain = await runCli(['codex', 'install', '--uninstall'], { env });
    expect(undoAgain.stdout).toContain('rotscope is not installed, nothing to change');
  });

  it('writes a new config.toml (default URL, no token) and removes it cleanly', async () => {
    const home = path.join(dir, 'fresh');
    const file = path.join(home, 'config.toml');
    const env = { CODEX_HOME: home, ROTSCOPE_URL: '', ROTSCOPE_TOKEN: '' };
    const install = await runCli(['codex', 'install'], { env });
    expect(install.code, install.stderr).toBe(0);
    expect(otel(file)).toEqual({
      exporter: { 'otlp-http': { endpoint: 'http://127.0.0.1:4318/v1/logs', protocol: 'binary' } },
      trace_exporter: {
        'otlp-http': { endpoint: 'http://127.0.0.1:4318/v1/traces', protocol: 'binary' },
      },
    });
    expect(readdirSync(home)).toEqual(['config.toml']); // nothing to back up
    const undo = await runCli(['codex', 'install', '--uninstall'], { env });
    expect(undo.code).toBe(0);
    expect(toml(file)).toEqual({});
  });

  it('takes ROTSCOPE_URL and ROTSCOPE_TOKEN; refuses a file that is not TOML; --help', async () => {
    const home = path.join(dir, 'env');
    const file = path.join(home, 'config.toml');
    const env = { CODEX_HOME: home, ROTSCOPE_URL: 'http://10.0.0.7:4318', ROTSCOPE_TOKEN: 'rs_x' };
    expect((await runCli(['codex', 'install'], { env })).code).toBe(0);
    const exporter = (otel(file).trace_exporter as Table)['otlp-http'] as Table;
    expect(exporter).toEqual({
      endpoint: 'http://10.0.0.7:4318/v1/traces',
      protocol: 'binary',
      headers: { authorization: 'Bearer rs_x' },
    });

    writeFileSync(file, 'model = \n[otel\n');
    const broken = await runCli(['codex', 'install'], { env });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('is not valid TOML');
    expect(readFileSync(file, 'utf8')).toBe('model = \n[otel\n');

    const help = await runCli(['codex', '--help'], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotscope codex install [--url URL] [--token TOKEN]');
    const bad = await runCli(['codex', 'setup'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: rotscope codex install');
  });
});
