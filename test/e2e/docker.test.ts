/**
 * The container's first run, checked without Docker (no image may be built or pulled here):
 * the Dockerfile, docker-compose.yml and .dockerignore are parsed and their first-run path
 * asserted, then the image's ENTRYPOINT + CMD is run directly with the image's and the compose
 * service's environment (the database swapped for a local one, the data directory and port for
 * free ones) until /readyz answers, and the image's own HEALTHCHECK command is run against it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createTestDatabase } from '../helpers/store.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

interface Instruction {
  op: string;
  /** The exec (JSON array) form, parsed; else the shell form as one string. */
  args: string[] | string;
}

/** Dockerfile instructions per stage: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Instruction[][] {
  const stages: Instruction[][] = [];
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const line of lines.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [, op, rest] = /^(\S+)\s+(.*)$/.exec(line)!;
    const raw = rest!.trim();
    const opUpper = op!.toUpperCase();
    // HEALTHCHECK options come before its CMD; keep them in the string and parse the CMD part.
    const exec = /(?:^|CMD\s+)(\[.*\])$/.exec(raw);
    const instruction = { op: opUpper, args: exec ? (JSON.parse(exec[1]!) as string[]) : raw };
    if (opUpper === 'FROM') stages.push([]);
    stages.at(-1)!.push(instruction);
  }
  return stages;
}

/** Compose's `${VAR}` / `${VAR:-default}` interpolation, against the given environment. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
    const set = env[name];
    return set !== undefined && set !== '' ? set : (fallback ?? '');
  });
}

const stages = parseDockerfile(read('Dockerfile'));
const runtime = stages.at(-1)!;
const final = (op: string) => runtime.filter((i) => i.op === op).at(-1);
const compose = parseYaml(read('docker-compose.yml')) as {
  services: Record<string, { environment?: Record<string, string>; healthcheck?: unknown }>;
};
const service = compose.services.rotscope!;
const dockerignore = read('.dockerignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

describe('Dockerfile, docker-compose.yml and .dockerignore', () => {
  it('listen on all interfaces with a token bootstrap, run as non-root, health-check /readyz', () => {
    expect(service.environment?.ROTSCOPE_HOST).toBe('0.0.0.0');
    // The operator's initial secret passes through; left empty, serve generates one.
    expect(service.environment?.ROTSCOPE_BOOTSTRAP_TOKEN).toBe('${ROTSCOPE_BOOTSTRAP_TOKEN:-}');
    expect(interpolate(service.environment!.ROTSCOPE_BOOTSTRAP_TOKEN!, {})).toBe('');
    expect(
      interpolate(service.environment!.ROTSCOPE_BOOTSTRAP_TOKEN!, {
        ROTSCOPE_BOOTSTRAP_TOKEN: 'x',
      }),
    ).toBe('x');
    // compose keeps the image's health check (not overridden, not disabled)
    expect(service.healthcheck).toBeUndefined();

    const user = final('USER')?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(String(user).split(':')[0]);
    expect(final('HEALTHCHECK')?.args).toEqual(['node', '-e', expect.stringContaining('/readyz')]);
    expect(final('ENTRYPOINT')?.args).toEqual(['node', 'bin/rotscope.js']);
    expect(final('CMD')?.args).toEqual(['serve']);
    // the image runs the compiled build, made in a build stage
    expect(stages.flat().some((i) => i.op === 'RUN' && /npm run build/.test(String(i.args)))).toBe(
      true,
    );
    expect(
      runtime.some(
        (i) => i.op === 'COPY' && /--from=\w+ \/app\/dist \.\/dist/.test(String(i.args)),
      ),
    ).toBe(true);
  });

  it('keeps local state out of the build context and everything the image copies in it', () => {
    for (const name of ['node_modules', '.rotscope', 'dist', '.git', '.env'])
      expect(dockerignore).toContain(name);
    const copied = stages
      .flat()
      .filter((i) => i.op === 'COPY' && !String(i.args).startsWith('--from'))
      .flatMap((i) => String(i.args).split(/\s+/).slice(0, -1));
    expect(copied.length).toBeGreaterThan(5);
    for (const source of copied) {
      expect(existsSync(path.join(ROOT, source)), source).toBe(true);
      expect(dockerignore, source).not.toContain(source.split('/')[0]);
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A database the container would start on: a fresh local PostgreSQL database, or a fresh embedded one. */
async function freshDatabase(): Promise<Record<string, string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-docker-'));
  dirs.push(dir);
  const url = await createTestDatabase(); // 127.0.0.1, never compose's `postgres` host
  return { DATABASE_URL: url ?? '', ROTSCOPE_DATA_DIR: dir };
}

/**
 * The container's environment: the image's ENV, then compose's (interpolated against
 * `shell`), then the local database and a free port. Source mode (vitest sets
 * ROTSCOPE_FROM_SOURCE) runs what the image's dist/ is compiled from.
 */
function containerEnv(
  shell: Record<string, string>,
  local: Record<string, string>,
  port: number,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of runtime.filter((x) => x.op === 'ENV')) {
    for (const [, key, value] of String(i.args).matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
  }
  for (const [key, value] of Object.entries(service.environment ?? {}))
    env[key] = interpolate(value, shell);
  expect(env.DATABASE_URL).toMatch(/^postgres:\/\/\w+:\w+@postgres:5432\/\w+$/);
  return {
    PATH: process.env.PATH ?? '',
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '',
    ...env,
    ...local,
    ROTSCOPE_PORT: String(port),
  };
}

interface Container {
  child: ChildProcess;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/** Runs ENTRYPOINT + CMD from the repository root (the image's WORKDIR) until /readyz is 200. */
async function runEntrypoint(env: Record<string, string>): Promise<Container> {
  const [command, ...args] = [
    ...(final('ENTRYPOINT')!.args as string[]),
    ...(final('CMD')!.args as string[]),
  ];
  expect(command).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const port = Number(env.ROTSCOPE_PORT);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`exited ${child.exitCode} before ready:\n${output}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return { child, port, output: () => output, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`/readyz not 200 in 180 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const findings = (port: number, token?: string) =>
  fetch(`http://127.0.0.1:${port}/api/findings`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  }).then((r) => r.status);

describe('the image entrypoint, run directly with the compose environment', () => {
  it('starts on a fresh database, prints one generated admin token once, and passes its health check', async () => {
    const local = await freshDatabase();
    const first = await runEntrypoint(containerEnv({}, local, await freePort()));
    let token: string;
    try {
      const lines = first
        .output()
        .split('\n')
        .filter((l) => l.includes('admin token'));
      expect(lines).toHaveLength(1);
      token = /: (rs_admin_\S+?)"/.exec(lines[0]!)![1]!;
      expect(await findings(first.port, token)).toBe(200);
      expect(await findings(first.port)).toBe(401);
      // the image's HEALTHCHECK command, as Docker runs it
      const health = final('HEALTHCHECK')!.args as string[];
      const check = spawnSync(process.execPath, health.slice(1), {
        env: { ROTSCOPE_PORT: String(first.port) },
        timeout: 10_000,
      });
      expect(check.status).toBe(0);
    } finally {
      await first.stop();
    }
    // a restart (same database) creates no second token and still starts
    const again = await runEntrypoint(containerEnv({}, local, await freePort()));
    try {
      expect(again.output()).not.toContain('admin token');
      expect(await findings(again.port, token)).toBe(200);
    } finally {
      await again.stop();
    }
    // and once it is down, the health check fails
    const down = spawnSync(process.execPath, (final('HEALTHCHECK')!.args as string[]).slice(1), {
      env: { ROTSCOPE_PORT: String(again.port) },
      timeout: 10_000,
    });
    expect(down.status).toBe(1);
  }, 480_000);

  it('stores ROTSCOPE_BOOTSTRAP_TOKEN from the shell as the admin token and never prints it', async () => {
    const chosen = `chosen-${'0123456789abcdef'.repeat(2)}`;
    const env = containerEnv(
      { ROTSCOPE_BOOTSTRAP_TOKEN: chosen },
      await freshDatabase(),
      await freePort(),
    );
    expect(env.ROTSCOPE_BOOTSTRAP_TOKEN).toBe(chosen);
    const server = await runEntrypoint(env);
    try {
      expect(await findings(server.port, chosen)).toBe(200);
      expect(await findings(server.port, `${chosen}x`)).toBe(401);
      expect(await findings(server.port)).toBe(401);
      expect(server.output()).not.toContain(chosen);
      expect(server.output()).not.toContain('admin token');
    } finally {
      await server.stop();
    }
  }, 300_000);
});
