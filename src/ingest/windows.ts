/**
 * Context windows: a built-in catalog of model-id patterns, per-workspace glob overrides,
 * and the correction rule (observed usage above the assumed window moves it to the next
 * known size up, source `inferred`). DESIGN §5.
 */
import type { WindowSource } from '../model/calls.ts';
import type { WindowOverride } from '../model/window-overrides.ts';

/**
 * One catalog row: the window of model ids containing `match` (after lower-casing and
 * stripping provider prefixes). Rows are tried in order; the first match wins, so more
 * specific rows come first.
 */
interface CatalogRow {
  match: string;
  window: number;
}

const M1 = 1_000_000;
const GEMINI_1M = 1_048_576;
const GEMINI_2M = 2_097_152;

// Sources: provider model pages (Anthropic, OpenAI, Google) as of 2026; sizes are the
// documented input+output context window in tokens.
const CATALOG: readonly CatalogRow[] = [
  // Anthropic: 1M-context variants are marked in the id by Claude Code and gateways
  { match: '[1m]', window: M1 },
  { match: 'claude-instant', window: 100_000 },
  { match: 'claude-2.0', window: 100_000 },
  { match: 'claude', window: 200_000 },
  // OpenAI
  { match: 'gpt-4.1', window: 1_047_576 },
  { match: 'gpt-4o', window: 128_000 },
  { match: 'chatgpt-4o', window: 128_000 },
  { match: 'gpt-4.5', window: 128_000 },
  { match: 'gpt-4-turbo', window: 128_000 },
  { match: 'gpt-4-1106', window: 128_000 },
  { match: 'gpt-4-0125', window: 128_000 },
  { match: 'gpt-4-32k', window: 32_768 },
  { match: 'gpt-4', window: 8_192 },
  { match: 'gpt-3.5-turbo-instruct', window: 4_096 },
  { match: 'gpt-3.5', window: 16_385 },
  { match: 'gpt-5-chat', window: 128_000 },
  { match: 'gpt-5', window: 400_000 },
  { match: 'gpt-oss', window: 131_072 },
  { match: 'o1-mini', window: 128_000 },
  { match: 'o1-preview', window: 128_000 },
  { match: 'o1', window: 200_000 },
  { match: 'o3', window: 200_000 },
  { match: 'o4-mini', window: 200_000 },
  // Google
  { match: 'gemini-1.5-pro', window: GEMINI_2M },
  { match: 'gemini-1.5', window: GEMINI_1M },
  { match: 'gemini-2', window: GEMINI_1M },
  { match: 'gemini-3', window: GEMINI_1M },
  { match: 'gemini-1.0', window: 32_760 },
  { match: 'gemini-pro', window: 32_760 },
  // open models commonly served behind OpenAI-compatible APIs
  { match: 'llama-3.1', window: 131_072 },
  { match: 'llama-3.2', window: 131_072 },
  { match: 'llama-3.3', window: 131_072 },
  { match: 'mistral-large', window: 131_072 },
  { match: 'deepseek', window: 128_000 },
];

function ladder(sizes: readonly number[]): readonly number[] {
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** Every size the correction rule may move to, ascending, for models of no known family. */
const KNOWN_SIZES = ladder([...CATALOG.map((r) => r.window), 256_000, 272_000, M1, 2_000_000]);

/**
 * Size ladders per model family: a Claude model seen above 200k is a 1M variant, not a
 * 256k model of another vendor.
 */
const FAMILY_SIZES: ReadonlyArray<{ prefix: string; sizes: readonly number[] }> = [
  { prefix: 'claude', sizes: ladder([100_000, 200_000, M1]) },
  { prefix: 'gemini', sizes: ladder([32_760, GEMINI_1M, GEMINI_2M]) },
  {
    prefix: 'gpt',
    sizes: ladder([4_096, 8_192, 16_385, 32_768, 128_000, 131_072, 272_000, 400_000, 1_047_576]),
  },
  { prefix: 'o', sizes: ladder([128_000, 200_000, 400_000, 1_047_576]) },
];

/** Lower-cases and strips provider prefixes (`anthropic/`, `us.anthropic.`, `models/`). */
function canonical(model: string): string {
  let m = model.trim().toLowerCase();
  const slash = m.lastIndexOf('/');
  if (slash >= 0) m = m.slice(slash + 1);
  // Bedrock ids: `us.anthropic.claude-…`, `anthropic.claude-…`
  const dot = m.indexOf('anthropic.');
  if (dot >= 0) m = m.slice(dot + 'anthropic.'.length);
  return m;
}

function is1mVariant(m: string): boolean {
  return m.includes('[1m]') || m.endsWith('-1m') || m.includes('-1m-') || m.includes(':1m');
}

/**
 * Model ids whose window the id alone cannot settle, with the window the runtime most likely
 * used. Claude Code 2.1.x runs `claude-opus-4-8` with a 1M window by default: its spans say
 * `claude-opus-4-8[1m]`, its transcripts and `api_request` events only `claude-opus-4-8`
 * (measured on 2.1.197, conventions §5.0).
 */
const ASSUMED: readonly CatalogRow[] = [{ match: 'claude-opus-4-8', window: M1 }];

/** The assumed window of a model id the catalog cannot settle (see ASSUMED), else null. */
export function assumedWindow(model: string): number | null {
  const m = canonical(model);
  if (is1mVariant(m)) return null;
  for (const row of ASSUMED) if (m.includes(row.match)) return row.window;
  return null;
}

/** The catalog window of a model id, or null when the model is not known. */
export function catalogWindow(model: string): number | null {
  const m = canonical(model);
  if (m.startsWith('claude') && is1mVariant(m)) return M1;
  for (const row of CATALOG) {
    if (row.match === 'o1' || row.match === 'o3') {
      // o-series ids start with the family name; avoid matching inside other ids
      if (m === row.match || m.startsWith(`${row.match}-`)) return row.window;
      continue;
    }
    if (m.includes(row.match)) return row.window;
  }
  return null;
}

const globCache = new Map<string, RegExp>();

/** Compiles (once) a case-insensitive glob: `*` any run, `?` one character. */
function globRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re === undefined) {
    const body = glob
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`, 'i');
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, re);
  }
  return re;
}

/** The first override whose glob matches the model id (as sent, or canonical). */
export function overrideWindow(model: string, overrides: readonly WindowOverride[]): number | null {
  if (overrides.length === 0) return null;
  const c = canonical(model);
  for (const o of overrides) {
    const re = globRegExp(o.model);
    if (re.test(model) || re.test(c)) return o.window;
  }
  return null;
}

/**
 * The smallest known window size ≥ `tokens` for the model's family (any family when the
 * model is not of a known one), else `tokens` itself.
 */
export function nextKnownSize(tokens: number, model = ''): number {
  const m = canonical(model);
  let sizes = KNOWN_SIZES;
  for (const f of FAMILY_SIZES) {
    if (m.startsWith(f.prefix) && (f.prefix !== 'o' || /^o\d/.test(m))) {
      sizes = f.sizes;
      break;
    }
  }
  for (const s of sizes) if (s >= tokens) return s;
  return tokens;
}

/**
 * The context window of a call: the first matching workspace override, else an assumed
 * runtime default for ids that cannot settle it (source `assumed`), else the catalog.
 * When `observedTokens` (the call's context usage) exceeds that window, the observation wins:
 * the window moves to the next known size up and the source becomes `inferred`. An unknown
 * model gives `{ window: null, source: null }` (an observation alone does not name a window).
 */
export function contextWindowFor(
  model: string | null,
  observedTokens: number | null,
  overrides: readonly WindowOverride[],
): { window: number | null; source: WindowSource | null } {
  if (model === null || model === '') return { window: null, source: null };
  let window = overrideWindow(model, overrides);
  let source: WindowSource | null = window === null ? null : 'override';
  if (window === null) {
    window = assumedWindow(model);
    source = window === null ? null : 'assumed';
  }
  if (window === null) {
    window = catalogWindow(model);
    source = window === null ? null : 'catalog';
  }
  if (window === null) return { window: null, source: null };
  if (observedTokens !== null && observedTokens > window) {
    return { window: nextKnownSize(observedTokens, model), source: 'inferred' };
  }
  return { window, source };
}
