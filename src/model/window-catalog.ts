/**
 * The built-in context-window catalog, kept as data (DESIGN §5, issue 19 §3): which model ids
 * have which window, where each number comes from and when it was verified, with the defaults
 * that depend on the agent's version. The rules that read it are src/ingest/windows.ts's
 * (precedence: workspace override > what the agent says > this catalog > unknown).
 *
 * Also the Claude Code versions rotscope claims (`CLAUDE_CODE_VERSIONS`, shown and warned about
 * on /api/coverage) and the band in which Claude Code's automatic compaction shows a 200k
 * window (read by the `context_too_full` detector). Plain data and pure helpers, no I/O.
 *
 * To add a model: add a row (more specific rows first; the first match wins), with the
 * evidence and the date you checked it. A model no row matches has no window: its calls are
 * not judged by `context_too_full`, and /api/coverage lists it, until a row or a workspace
 * override gives one.
 */

/** An agent rotscope reads by name, whose version can change a model's default window. */
export type AgentName = 'claude-code';

/** Which agent made a call, and its version when known. */
export interface AgentInfo {
  name: AgentName;
  /** The agent's version as it reports it (Claude Code `service.version`, a transcript's `version`). */
  version: string | null;
}

/** One catalog row. */
export interface WindowCatalogRow {
  /**
   * A case-insensitive glob (`*` any run, `?` one character) over the canonical model id:
   * lower case, without a provider prefix (`anthropic/`, `us.anthropic.`, `models/`).
   */
  model: string;
  /** The window in tokens (input the model accepts, the number usage is judged against). */
  window: number;
  /**
   * Only for calls of this agent, in these versions (both ends inclusive, either may be
   * absent). A row with `agent` never matches a call whose agent or version is unknown.
   */
  agent?: { name: AgentName; from?: string; through?: string };
  /**
   * `catalog`: the row settles the window. `assumed`: the model id cannot settle it and the
   * row gives the runtime's most likely default (said so in findings).
   */
  source: 'catalog' | 'assumed';
  /** Where the number comes from: a URL, or what was measured. */
  evidence: string;
  /** When the number was last checked (YYYY-MM-DD). */
  verified: string;
}

const M1 = 1_000_000;
const GEMINI_1M = 1_048_576;
const GEMINI_2M = 2_097_152;

const PROVIDER_PAGES = "the provider's model page (Anthropic, OpenAI, Google; the first catalog)";
const FIRST_CATALOG = '2026-11-29';

/** A row of the first catalog: the documented window from the provider's model page. */
const first = (model: string, window: number): WindowCatalogRow => ({
  model,
  window,
  source: 'catalog',
  evidence: PROVIDER_PAGES,
  verified: FIRST_CATALOG,
});

/** The catalog, first match wins (so the more specific rows come first). */
export const WINDOW_CATALOG: readonly WindowCatalogRow[] = [
  // Anthropic
  {
    model: '*claude-opus-5-5*',
    window: M1,
    source: 'catalog',
    evidence:
      "Claude Code 2.1.332's default model: its result JSON reports contextWindow 1,000,000; the id carries no [1m] and no 1M beta header is sent (conventions §5.0.1)",
    verified: '2026-12-02',
  },
  {
    model: '*claude-sonnet-5-5*',
    window: M1,
    source: 'catalog',
    evidence:
      "Claude Code 2.1.332's `--model sonnet`: its result JSON reports modelUsage['claude-sonnet-5-5'].contextWindow 1,000,000 and its status line input context_window.context_window_size 1,000,000; the id carries no [1m] (issue 34)",
    verified: '2026-12-04',
  },
  {
    model: '*claude-haiku-5-5*',
    window: M1,
    source: 'catalog',
    evidence:
      "Claude Code 2.1.332's `--model haiku`: its result JSON reports modelUsage['claude-haiku-5-5'].contextWindow 1,000,000 and its status line input context_window.context_window_size 1,000,000; the id carries no [1m] (issue 34)",
    verified: '2026-12-04',
  },
  {
    model: '*claude-opus-4-8*',
    window: 200_000,
    agent: { name: 'claude-code', through: '2.1.68' },
    source: 'catalog',
    evidence:
      'a real public Claude Code 2.1.68 transcript auto-compacts at 169,431 tokens (conventions §5.0.1)',
    verified: '2026-12-02',
  },
  {
    model: '*claude-opus-4-8*',
    window: M1,
    agent: { name: 'claude-code', from: '2.1.167' },
    source: 'catalog',
    evidence:
      '1M by default from Claude Code 2.1.167 (issue 19): 2.1.197 spans say claude-opus-4-8[1m] (conventions §5.0), public transcripts grow to 413k without a compaction (§5.0.1)',
    verified: '2026-12-02',
  },
  {
    model: '*claude-opus-4-8*',
    window: M1,
    source: 'assumed',
    evidence:
      "the id does not settle it (Claude Code 2.1.68 ran it on 200k, 2.1.167+ on 1M; transcripts and api_request events omit the [1m]): assumed 1M, Claude Code's default since about 2.1.1xx",
    verified: '2026-12-02',
  },
  first('*claude-instant*', 100_000),
  first('*claude-2.0*', 100_000),
  first('*claude-2*', 200_000),
  first('*claude-3*', 200_000),
  first('*claude-4*', 200_000),
  first('*claude-opus-4*', 200_000),
  {
    model: '*claude-sonnet-4*',
    window: 200_000,
    source: 'catalog',
    evidence: `${PROVIDER_PAGES}; Claude Code 2.1.197 auto-compacts claude-sonnet-4-6 at 172,047 tokens (conventions §5.0)`,
    verified: '2026-12-01',
  },
  first('*claude-haiku-4*', 200_000),
  // OpenAI
  first('*gpt-4.1*', 1_047_576),
  first('*gpt-4o*', 128_000),
  first('*gpt-4.5*', 128_000),
  first('*gpt-4-turbo*', 128_000),
  first('*gpt-4-1106*', 128_000),
  first('*gpt-4-0125*', 128_000),
  first('*gpt-4-32k*', 32_768),
  first('*gpt-4*', 8_192),
  first('*gpt-3.5-turbo-instruct*', 4_096),
  first('*gpt-3.5*', 16_385),
  first('*gpt-5-chat*', 128_000),
  {
    model: '*gpt-5.5*',
    window: 272_000,
    source: 'catalog',
    evidence:
      "Codex CLI 0.171.0's model catalog (its session files report model_context_window 258,400 usable of 272,000; conventions §5.0.2)",
    verified: '2026-12-02',
  },
  // gpt-5, its -mini/-nano/-codex/-pro/dated ids, 5.1 and 5.2; other 5.x ids are not known
  first('*gpt-5', 400_000),
  first('*gpt-5-*', 400_000),
  first('*gpt-5.1*', 400_000),
  first('*gpt-5.2*', 400_000),
  first('*gpt-oss*', 131_072),
  first('o1-mini*', 128_000),
  first('o1-preview*', 128_000),
  first('o1', 200_000),
  first('o1-*', 200_000),
  first('o3', 200_000),
  first('o3-*', 200_000),
  first('*o4-mini*', 200_000),
  // Google
  first('*gemini-1.5-pro*', GEMINI_2M),
  first('*gemini-1.5*', GEMINI_1M),
  first('*gemini-2*', GEMINI_1M),
  first('*gemini-3-*', GEMINI_1M),
  // gemini-3.1-pro-preview and later point releases: Gemini CLI 0.61.0's own tokenLimit gives
  // every Gemini model 1,048,576 and the Gemma 4 models it serves 256,000 (measured in its bundle)
  first('*gemini-3.*', GEMINI_1M),
  first('*gemma-4*', 256_000),
  first('*gemini-1.0*', 32_760),
  first('*gemini-pro*', 32_760),
  // open models commonly served behind OpenAI-compatible APIs
  first('*llama-3.1*', 131_072),
  first('*llama-3.2*', 131_072),
  first('*llama-3.3*', 131_072),
  first('*mistral-large*', 131_072),
  first('*deepseek-chat*', 128_000),
  first('*deepseek-reasoner*', 128_000),
  first('*deepseek-v3*', 128_000),
  first('*deepseek-r1*', 128_000),
];

/**
 * The sizes a model family comes in, ascending: where observed usage above a window moves it
 * (a Claude model seen above 200k is a 1M variant, not a 256k model of another vendor). A
 * model of no family here, or usage above its family's largest size, has no known window.
 */
export const WINDOW_FAMILIES: ReadonlyArray<{
  family: string;
  test: RegExp;
  sizes: readonly number[];
}> = [
  { family: 'claude', test: /^claude/, sizes: [100_000, 200_000, M1] },
  { family: 'gemini', test: /^gemini/, sizes: [32_760, GEMINI_1M, GEMINI_2M] },
  {
    family: 'gpt',
    test: /^gpt/,
    sizes: [4_096, 8_192, 16_385, 32_768, 128_000, 131_072, 272_000, 400_000, 1_047_576],
  },
  { family: 'o-series', test: /^o\d/, sizes: [128_000, 200_000, 400_000, 1_047_576] },
];

/** The 1M window `[1m]` / `-1m` in a model id names (Claude Code, gateways). */
export const MODEL_ID_1M_WINDOW = M1;

/**
 * The Claude Code versions rotscope claims: the oldest it supports and the newest whose real
 * CLI output it has verified (test/fixtures/real/claude-code-<version>/), and every verified
 * one. /api/coverage warns about sessions from a newer (or older) Claude Code.
 */
export const CLAUDE_CODE_VERSIONS = {
  oldestSupported: '2.1.197',
  newestVerified: '2.1.332',
  verified: ['2.1.197', '2.1.332'],
} as const;

/** Producers (`LlmCall.producer`) whose calls are Claude Code's: spans, log events, transcripts. */
export const CLAUDE_CODE_CALL_PRODUCERS: readonly string[] = [
  'claude_code',
  'claude_code_log',
  'claude_code_transcript',
];

/**
 * Claude Code's automatic compaction on a 200k window fires near 167k tokens (conventions
 * §5.0: 172,047 measured on 2.1.197; a 2.1.68 transcript at 169,431); on a 1M window it fires
 * near 1M. An automatic compaction with tokens before in this band says the window of the
 * model that was compacted was 200k, whatever the catalog's default for it is now.
 */
export const CLAUDE_CODE_AUTO_COMPACT = { minTokens: 150_000, maxTokens: 200_000, window: 200_000 };

/** `1.2.3` → [1, 2, 3] (a suffix such as `-beta` is ignored); null when it is no version. */
export function parseVersion(version: string): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** -1, 0 or 1 as version `a` is older than, equal to or newer than `b`; null when either is no version. */
export function compareVersions(a: string, b: string): -1 | 0 | 1 | null {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (x === null || y === null) return null;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return 0;
}

/**
 * Where a Claude Code version stands: `verified` (its real output is tested), `supported`
 * (between the oldest supported and the newest verified), `older` (before the oldest
 * supported), `newer` (after the newest verified: its telemetry may have changed), or
 * `unknown` (not a version number).
 */
export type ClaudeCodeVersionStatus = 'verified' | 'supported' | 'older' | 'newer' | 'unknown';

export function claudeCodeVersionStatus(version: string): ClaudeCodeVersionStatus {
  const { oldestSupported, newestVerified, verified } = CLAUDE_CODE_VERSIONS;
  const newest = compareVersions(version, newestVerified);
  const oldest = compareVersions(version, oldestSupported);
  if (newest === null || oldest === null) return 'unknown';
  if (newest > 0) return 'newer';
  if (oldest < 0) return 'older';
  return verified.some((v) => compareVersions(version, v) === 0) ? 'verified' : 'supported';
}
