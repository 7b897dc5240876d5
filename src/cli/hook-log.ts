/**
 * The hook's compaction log (`rotscope hook`, ./hook.ts): where it is, and how its lines write
 * times, sizes and ages. The outbox (./hook-outbox.ts) keeps its folders beside it.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import { plural } from '../model/plural.ts';
import { str } from './statusline.ts';

export type Env = Record<string, string | undefined>;
/** Appends one line to the compaction log. */
export type HookLog = (text: string) => void;

/** The compaction log's path. */
export function compactionLogPath(env: Env): string {
  return (
    str(env.ROTSCOPE_COMPACTION_LOG) ??
    path.join(str(env.HOME) ?? homedir(), '.rotscope', 'compactions.log')
  );
}

/** `2026-09-04 03:07:33`, local time. */
export function logTimestamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** 566.5MB, 12.0KB, 1.2GB (binary units). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes}B` : `${value.toFixed(1)}${units[unit]}`;
}

/** 80 days, 1 day, 5 hours, 12 min, 30 s. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s >= 86_400) return plural(Math.floor(s / 86_400), 'day');
  if (s >= 3600) return plural(Math.floor(s / 3600), 'hour');
  if (s >= 60) return `${Math.floor(s / 60)} min`;
  return `${s} s`;
}
