/**
 * The `rotscope` command: `run(argv, io, env)` returns the exit code. bin/rotscope.js is the
 * only place that touches process.argv, process.env and the exit code.
 */
import { readFileSync } from 'node:fs';
import type { Config } from './config.ts';

// Every command's modules (and config.ts, which loads zod) are imported when that command runs,
// so a light command such as `statusline` or `--version` starts as fast as bare node.

/** The settings a command that opens the store reads (its `--help` lists these, not the server's). */
const STORE_SETTINGS = ['databaseUrl', 'dataDir'] as const;

/**
 * One usage entry per command, as `rotscope --help` lists them; `rotscope COMMAND --help` (or
 * `-h`, on any subcommand too) prints the command's own usage and the settings it reads (`all`:
 * every one, for `serve`), and exits 0.
 */
interface CommandEntry {
  command: string;
  usage: string;
  settings?: 'all' | readonly (keyof Config)[];
}

/** The commands before the agents' install commands in `rotscope --help`, then those after. */
const COMMANDS: readonly CommandEntry[] = [
  {
    command: 'serve',
    usage: `  rotscope serve [flags]                     OTLP/HTTP receiver, API, evaluator, notifier (default 127.0.0.1:4318)`,
    settings: 'all',
  },
  {
    command: 'migrate',
    usage: `  rotscope migrate [flags]                   apply database migrations and exit`,
    settings: STORE_SETTINGS,
  },
  {
    command: 'token',
    usage: `  rotscope token create --workspace W --scope ingest|read|admin [--name NAME] [--token ADMIN]
                                             create an API token (printed once)
  rotscope token list [--workspace W] [--all] [--json] [--token ADMIN]
                                             list tokens (their first characters, never the token)
  rotscope token revoke ID [--token ADMIN]   revoke a token
                                             beside a running server on the same data directory,
                                             these go through that server (with an admin token
                                             once tokens exist: --token or ROTSCOPE_TOKEN)`,
    settings: STORE_SETTINGS,
  },
  {
    command: 'secrets',
    usage: `  rotscope secrets status|seal|rotate        channel secrets at rest: keys in use, seal plaintext rows, rotate the key`,
    settings: [...STORE_SETTINGS, 'secretKey', 'secretKeyPrevious'],
  },
  {
    command: 'statusline',
    usage: `  rotscope statusline [--segment]            Claude Code status line: repo, branch and how full the context window is (JSON on stdin);
                                             --segment: the context part alone, as one widget of ccstatusline and the like`,
  },
  {
    command: 'hook',
    usage: `  rotscope hook                              Claude Code hook (PreCompact, SessionStart, PostCompact; JSON on stdin):
                                             logs compactions, tells a rotscope server (ROTSCOPE_URL, ROTSCOPE_TOKEN)`,
  },
];

const COMMANDS_AFTER_AGENTS: readonly CommandEntry[] = [
  {
    command: 'analyze',
    usage: `  rotscope analyze FILE... [--json] [--fail-on SEVERITY]
                                             run the detectors offline on transcripts / OTLP JSON files`,
  },
  {
    command: 'import',
    usage: `  rotscope import FILE|FOLDER... [--workspace W] [--token TOKEN] [--notify [--notify-hours H]]
                                             import Claude Code transcripts (a folder: the transcripts
                                             under it, e.g. ~/.claude/projects), Codex session files
                                             and OTLP/JSON traces into the store; beside a running
                                             server on the same data directory, through that server
                                             (with an ingest or admin token once tokens exist:
                                             --token or ROTSCOPE_TOKEN); --notify sends the findings
                                             on calls of the last H hours (default 24) to the
                                             alert's channels, as if they had arrived live`,
    settings: STORE_SETTINGS,
  },
];

async function settingsHelp(only: 'all' | readonly string[] = 'all'): Promise<string> {
  const { ENV_NAMES, flagName } = await import('./config.ts');
  return `Settings (flag or env variable):
${Object.entries(ENV_NAMES)
  .filter(([key]) => only === 'all' || only.includes(key))
  .map(([key, env]) => `  --${flagName(key).padEnd(26)} ${env}`)
  .join('\n')}
`;
}

/**
 * The agents' install commands (`rotscope qwen install`, ...), declared by their profiles
 * (src/model/agents/, `installer`): read only when a command is not one of the above, or for help,
 * so `--version` and the other commands load no profile.
 */
async function agentInstallers() {
  const { AGENT_PROFILES } = await import('./model/agents/index.ts');
  return (AGENT_PROFILES as readonly import('./model/agents/index.ts').AgentProfile[]).flatMap(
    (p) => (p.installer === undefined ? [] : [p.installer]),
  );
}

/** The install command of an agent (its profile's `installer.module` of src/cli/), if `command` is one. */
async function agentInstaller(
  command: string,
): Promise<import('./cli/install-shared.ts').AgentInstaller | undefined> {
  const entry = (await agentInstallers()).find((i) => i.command === command);
  if (entry === undefined) return undefined;
  const module = (await import(`./cli/${entry.module}.ts`)) as {
    installer: import('./cli/install-shared.ts').AgentInstaller;
  };
  return module.installer;
}

/** Every command's usage entry, in `rotscope --help` order. */
async function allCommands(): Promise<CommandEntry[]> {
  return [...COMMANDS, ...(await agentInstallers()), ...COMMANDS_AFTER_AGENTS];
}

async function help(): Promise<string> {
  return `rotscope: finds context rot in LLM agents from their OpenTelemetry data

Usage:
${(await allCommands()).map((c) => c.usage).join('\n')}
  rotscope --version                         print the version
  rotscope COMMAND --help                    help on one command

${await settingsHelp()}`;
}

/** `rotscope COMMAND --help`: the command's usage (and its settings when it reads them). */
async function commandHelp(command: string): Promise<string | null> {
  const entry = [...COMMANDS, ...COMMANDS_AFTER_AGENTS].find((c) => c.command === command);
  if (entry === undefined) return (await agentInstaller(command))?.usage ?? null;
  const own = await ownUsage(command);
  if (own !== undefined) return own;
  return `Usage:\n${entry.usage}\n${entry.settings !== undefined ? `\n${await settingsHelp(entry.settings)}` : ''}`;
}

/** The full usage of a command that has its own (every flag explained), else undefined. */
async function ownUsage(command: string): Promise<string | undefined> {
  switch (command) {
    case 'analyze':
      return (await import('./cli/analyze.ts')).ANALYZE_USAGE;
    default:
      return undefined;
  }
}

/** True when the arguments ask for help (`--help` or `-h` anywhere before a `--`). */
export function asksForHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** The version in package.json (two folders up from src/cli/ and from dist/cli/ alike). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String(pkg.version);
}

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The whole of standard input (statusline, hook); absent when there is none. */
  readStdin?: () => Promise<string>;
}

async function parseConfig(
  command: string,
  argv: string[],
  extra: Record<string, { type: 'string' | 'boolean' }>,
  io: Io,
  env: Record<string, string | undefined>,
) {
  const { ENV_NAMES, flagName, loadConfig } = await import('./config.ts');
  const { parseArgs } = await import('node:util');
  const configFlags = Object.fromEntries(
    Object.keys(ENV_NAMES).map((key) => [flagName(key), { type: 'string' as const }]),
  );
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...configFlags, ...extra },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // An unknown flag or a flag without its value is bad usage (exit 2), not a crash.
    const { flagError } = await import('./cli/flag-suggest.ts');
    const message = flagError(command, error, [...Object.keys(configFlags), ...Object.keys(extra)]);
    if (message === undefined) throw error;
    io.stderr(`${message}\n(rotscope ${command} --help lists its flags)\n`);
    return undefined;
  }
  // The embedded store: the one chosen, else an earlier version's ./.rotscope, else per-user.
  const { chooseDataDir, legacyNotice } = await import('./cli/store-location.ts');
  const flag = parsed.values['data-dir'];
  const dataDir = chooseDataDir(
    { flag: typeof flag === 'string' ? flag : undefined, env: env.ROTSCOPE_DATA_DIR },
    env,
    process.cwd(),
  );
  const result = loadConfig(env, {
    ...(parsed.values as Record<string, string | undefined>),
    'data-dir': dataDir.dataDir,
  });
  if (!result.ok) {
    io.stderr(`invalid settings:\n${result.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    return undefined;
  }
  const notice = result.config.databaseUrl === undefined ? legacyNotice(dataDir, env) : undefined;
  if (notice !== undefined) io.stderr(`rotscope ${command}: ${notice}\n`);
  return {
    config: result.config,
    values: parsed.values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
    dataDir,
  };
}

/** A running server to go through (or name) instead of creating a store: held-data-dir.ts. */
async function serverElsewhere(
  parsed: { config: Config; dataDir: import('./cli/store-location.ts').DataDirChoice },
  env: Record<string, string | undefined>,
) {
  const { findServerElsewhere } = await import('./cli/held-data-dir.ts');
  return findServerElsewhere(parsed.dataDir, parsed.config, env);
}

export async function run(
  argv: string[],
  io: Io,
  env: Record<string, string | undefined>,
): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && asksForHelp(rest)) {
    const text = await commandHelp(command);
    if (text !== null) {
      io.stdout(text);
      return 0;
    }
  }
  switch (command) {
    case 'serve': {
      const parsed = await parseConfig(command, rest, {}, io, env);
      if (!parsed) return 2;
      try {
        await serveUntilSignal(parsed.config, io, env);
      } catch (error) {
        // a StartupError (src/startup.ts) says the cause and the fix in one line
        if ((error as { code?: unknown }).code !== 'STARTUP_FAILED') throw error;
        io.stderr(`rotscope serve: ${(error as Error).message}\n`);
        return 1;
      }
      return 0;
    }
    case 'migrate': {
      const parsed = await parseConfig(command, rest, {}, io, env);
      if (!parsed) return 2;
      const { openStoreOrHolder, refuseHeld } = await import('./cli/held-data-dir.ts');
      const { migrate } = await import('./store/migrate.ts');
      const elsewhere = await serverElsewhere(parsed, env);
      const { store, locked } = await openStoreOrHolder(parsed.config, elsewhere);
      if (locked) return refuseHeld('migrate', locked, io);
      try {
        const result = await migrate(store.db);
        io.stdout(
          result.applied.length > 0
            ? `applied ${result.applied.join(', ')} (schema version ${result.current})\n`
            : `up to date (schema version ${result.current})\n`,
        );
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'token': {
      const { TOKEN_USAGE, tokenCommand } = await import('./cli/token.ts');
      if (!['create', 'list', 'revoke'].includes(rest[0] ?? '')) {
        io.stderr(TOKEN_USAGE);
        return 2;
      }
      const parsed = await parseConfig(
        `token ${rest[0]}`,
        rest.slice(1),
        {
          workspace: { type: 'string' },
          scope: { type: 'string' },
          token: { type: 'string' },
          name: { type: 'string' },
          all: { type: 'boolean' },
          json: { type: 'boolean' },
        },
        io,
        env,
      );
      if (!parsed) return 2;
      return tokenCommand(
        rest[0],
        { ...parsed, elsewhere: await serverElsewhere(parsed, env) },
        io,
        env,
      );
    }
    case 'secrets': {
      const { SECRETS_USAGE, secretsCommand } = await import('./cli/secrets.ts');
      if (!['status', 'seal', 'rotate'].includes(rest[0] ?? '')) {
        io.stderr(SECRETS_USAGE);
        return 2;
      }
      const parsed = await parseConfig(
        `secrets ${rest[0]}`,
        rest.slice(1),
        { token: { type: 'string' } },
        io,
        env,
      );
      if (!parsed) return 2;
      const token = parsed.values.token;
      return secretsCommand(
        rest[0]!,
        parsed.config,
        io,
        typeof token === 'string' ? token : env.ROTSCOPE_TOKEN,
        await serverElsewhere(parsed, env),
      );
    }
    case 'import': {
      const parsed = await parseConfig(
        command,
        rest,
        {
          workspace: { type: 'string' },
          token: { type: 'string' },
          notify: { type: 'boolean' },
          'notify-hours': { type: 'string' },
        },
        io,
        env,
      );
      if (!parsed) return 2;
      const { importCommand, parseNotifyHours } = await import('./cli/import.ts');
      const token = parsed.values.token ?? env.ROTSCOPE_TOKEN;
      const hoursText = parsed.values['notify-hours'];
      const notify = parseNotifyHours(typeof hoursText === 'string' ? hoursText : undefined);
      if ('error' in notify) {
        io.stderr(`rotscope import: ${notify.error}\n`);
        return 2;
      }
      if (hoursText !== undefined && parsed.values.notify !== true) {
        io.stderr('rotscope import: --notify-hours goes with --notify\n');
        return 2;
      }
      return importCommand(
        parsed.positionals,
        typeof parsed.values.workspace === 'string' ? parsed.values.workspace : undefined,
        parsed.config,
        io,
        {
          token: typeof token === 'string' && token !== '' ? token : undefined,
          notifyHours: parsed.values.notify === true ? notify.hours : undefined,
          elsewhere: await serverElsewhere(parsed, env),
        },
      );
    }
    case 'statusline': {
      const { statuslineArgs, statuslineCommand } = await import('./cli/statusline.ts');
      const parsed = statuslineArgs(rest);
      if (!parsed.ok) {
        io.stderr(`rotscope statusline: ${parsed.reason}\n`);
        io.stdout('\n');
        return 2;
      }
      return statuslineCommand((await io.readStdin?.()) ?? '', io, env, parsed.options);
    }
    case 'hook': {
      const { hookCommand } = await import('./cli/hook.ts');
      return hookCommand((await io.readStdin?.()) ?? '', io, env);
    }
    case 'analyze': {
      const { analyzeCommand } = await import('./cli/analyze.ts');
      return analyzeCommand(rest, io);
    }
    case '--version':
    case '-v':
      io.stdout(`${version()}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(await help());
      return command === undefined ? 2 : 0;
    default: {
      // an agent's install command (`rotscope qwen install`), declared by its profile
      const installer = await agentInstaller(command);
      if (installer !== undefined) return installer.run(rest, io, env);
      io.stderr(`unknown command "${command}"\n\n${await help()}`);
      return 2;
    }
  }
}

async function serveUntilSignal(
  config: Config,
  io: Io,
  env: Record<string, string | undefined>,
): Promise<void> {
  const { serve } = await import('./main.ts');
  const { writeServerRecord } = await import('./cli/server-record.ts');
  const { resolve: resolvePath } = await import('node:path');
  const server = await serve(config); // logs "rotscope listening on URL" (once)
  // Commands run from any folder find this server (and its store) by this record.
  let removeRecord = () => {};
  try {
    removeRecord = writeServerRecord(env, {
      pid: process.pid,
      url: server.url,
      dataDir: config.databaseUrl === undefined ? resolvePath(config.dataDir) : null,
      startedAt: new Date().toISOString(),
    });
  } catch (error) {
    // Serving matters more than being found: say so and go on.
    io.stderr(
      `rotscope serve: could not record this server for other commands: ${String(error)}\n`,
    );
  }
  process.once('exit', removeRecord);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      io.stderr(`${signal}: shutting down\n`);
      removeRecord();
      server.stop().then(resolve, (error: unknown) => {
        io.stderr(`shutdown failed: ${String(error)}\n`);
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
