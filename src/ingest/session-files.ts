/**
 * The readers of the agents' session files, by input format: each agent's profile
 * (src/model/agents/) declares its files (format, name, where, producer) and the module here that
 * reads them (`sessionFiles.reader`), which exports them as `sessionFileReader` (./types.ts): how
 * a file's record is told for the agent's, how its name is, and how its text becomes calls. The
 * modules are loaded by those names, so a new agent's files need its profile and its reader, no
 * line here. src/receiver/input-text.ts tries them in the profiles' order; a Claude Code
 * transcript is the fallback, as any JSON line with a `type` may be one.
 */
import { SESSION_FILES } from '../model/agents/index.ts';
import type { SessionFileReader } from './types.ts';

export type { SessionFileReader } from './types.ts';

export const SESSION_FILE_READERS: Readonly<Record<string, SessionFileReader>> = Object.fromEntries(
  await Promise.all(
    SESSION_FILES.map(async (f) => {
      const module = (await import(`./${f.reader}.ts`)) as {
        sessionFileReader?: SessionFileReader;
      };
      if (module.sessionFileReader === undefined)
        throw new Error(`src/ingest/${f.reader}.ts exports no sessionFileReader (${f.format})`);
      return [f.format, module.sessionFileReader] as const;
    }),
  ),
);

/** The format that is any JSON line with a `type`, tried last. */
export const FALLBACK_FORMAT = 'claude_code_transcript' as const;
