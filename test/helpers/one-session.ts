/**
 * One real Claude Code session from every source (test/fixtures/real/claude-code-one-session/,
 * see its PROVENANCE.md): Claude Code's OTLP bodies, the compaction spans `rotscope hook` sent,
 * and the transcript, per CLI version.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../fixtures/real/claude-code-one-session/', import.meta.url));

/** The CLI versions the session was captured with. */
export const ONE_SESSION_VERSIONS = ['2.1.197', '2.1.332'] as const;

/** One OTLP/JSON request body as it reached the sink, in arrival order. */
export interface CapturedBody {
  n: number;
  signal: 'traces' | 'logs';
  text: string;
}

export interface OneSession {
  version: string;
  sessionId: string;
  /** Claude Code's own exports (spans and log events), in arrival order. */
  telemetry: CapturedBody[];
  /** The compaction spans the hooks (`rotscope hook`) sent, in arrival order. */
  hook: CapturedBody[];
  /** The transcript's text. */
  transcript: string;
}

function bodies(dir: string): CapturedBody[] {
  return readdirSync(dir)
    .filter((f) => /^\d+-(traces|logs)\.json$/.test(f))
    .sort()
    .map((f) => ({
      n: Number(f.slice(0, f.indexOf('-'))),
      signal: f.includes('-traces.') ? ('traces' as const) : ('logs' as const),
      text: readFileSync(join(dir, f), 'utf8'),
    }));
}

export function loadOneSession(version: string): OneSession {
  const dir = join(ROOT, version);
  const transcriptFile = readdirSync(join(dir, 'transcript')).find((f) => f.endsWith('.jsonl.gz'))!;
  return {
    version,
    sessionId: transcriptFile.replace(/\.jsonl\.gz$/, ''),
    telemetry: bodies(join(dir, 'otlp')),
    hook: bodies(join(dir, 'hook')),
    transcript: gunzipSync(readFileSync(join(dir, 'transcript', transcriptFile))).toString('utf8'),
  };
}

/**
 * Writes the transcript where Claude Code keeps it (`<dir>/projects/<slug>/<session>.jsonl`)
 * and returns its path: what `rotscope import ~/.claude/projects/...` reads.
 */
export function writeTranscript(session: OneSession, dir: string): string {
  const folder = join(dir, 'projects', '-work-one-session');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `${session.sessionId}.jsonl`);
  writeFileSync(path, session.transcript);
  return path;
}
