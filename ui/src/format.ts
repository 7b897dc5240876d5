/** How the console writes numbers, shares and times: one place, so every page reads the same. */
import { plural } from '../../src/model/plural.ts';

/** 1234 → "1,234"; 152300 → "152.3k"; 2_100_000 → "2.1M". */
export function formatTokens(tokens: number | null | undefined): string {
  if (tokens === null || tokens === undefined) return '–';
  if (Math.abs(tokens) < 10_000) return tokens.toLocaleString('en-US');
  if (Math.abs(tokens) < 1_000_000) return `${(tokens / 1000).toFixed(1)}k`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

/** 0.853 → "85%" (a share of 0..1). */
export function formatShare(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '–';
  return `${Math.round(share * 100)}%`;
}

/** An ISO time or epoch ms → "2026-12-01 08:12:04" in the viewer's time zone. */
export function formatTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** How long ago an ISO time or epoch ms was: "just now", "12 min ago", "3 h ago", "2 days ago". */
export function formatAge(value: string | number | null | undefined, now = Date.now()): string {
  if (value === null || value === undefined) return '–';
  const ms = now - new Date(value).getTime();
  if (!Number.isFinite(ms)) return '–';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return `${plural(Math.floor(hours / 24), 'day')} ago`;
}

/**
 * The colour bands of a window share (dim below `dimBelow`, amber from `amberFrom`, red from
 * `redFrom`) and their levels: the server's own rules (src/model/usage-rules.ts), which the
 * status line uses too. The server sends a workspace's bands (from its usageThreshold and
 * usageCritical knobs); the defaults are the default knobs', 60/70/85 %.
 */
export {
  DEFAULT_USAGE_BANDS,
  usageLevelIn as usageLevel,
  type UsageBands,
} from '../../src/model/usage-rules.ts';

/** The CSS class of a severity: `severity-info|warning|critical`. */
export function severityClass(severity: string): string {
  return `severity-${severity}`;
}

/** The last two parts of a path or repository URL ("acme/api"), enough to tell projects apart. */
export function shortProject(project: string): string {
  const parts = project
    .replace(/\.git$/, '')
    .split(/[/\\:]/)
    .filter((part) => part !== '');
  return parts.length <= 2 ? project : `…/${parts.slice(-2).join('/')}`;
}

/**
 * A cost the producer reported, in US dollars: "$0.0063" under a dollar (a call costs cents or
 * less), "$12.40" from one; "–" when none was reported (rotscope never prices a call).
 */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '–';
  return `$${usd.toFixed(Math.abs(usd) < 1 ? 4 : 2)}`;
}

/** "12.5" for a rate per 100 conversations (one decimal); "–" without conversations. */
export function formatRate(rate: number | null): string {
  return rate === null ? '–' : (Math.round(rate * 10) / 10).toString();
}
