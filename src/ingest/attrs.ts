/**
 * Small, allocation-free readers over decoded attributes. Attribute objects are plain JSON
 * (src/model/telemetry.ts); lookups are property reads, never scans, except where a producer
 * spreads one value over indexed keys (`gen_ai.prompt.N.*`), which `parts.ts` scans once.
 */
import type { AttrValue, Attributes } from '../model/telemetry.ts';

/** A string attribute, or null when absent, empty or not a string. */
export function str(attrs: Attributes, key: string): string | null {
  const v = attrs[key];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The first non-empty string among `keys`. */
export function firstStr(attrs: Attributes, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = attrs[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return null;
}

/** A finite number from a number or a numeric string (int64 may arrive as either). */
export function toNum(v: AttrValue | undefined): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A numeric attribute, or null. */
export function num(attrs: Attributes, key: string): number | null {
  return toNum(attrs[key]);
}

/** The first numeric attribute among `keys`, with the key that matched. */
export function firstNum(
  attrs: Attributes,
  keys: readonly string[],
): { value: number; key: string } | null {
  for (const k of keys) {
    const n = toNum(attrs[k]);
    if (n !== null) return { value: n, key: k };
  }
  return null;
}

/** A boolean attribute; `"true"`/`"false"` strings are accepted. */
export function bool(attrs: Attributes, key: string): boolean | null {
  const v = attrs[key];
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return null;
}

/**
 * Parses a JSON-string attribute (or returns a structured value as is). Returns undefined
 * when absent or unparsable. Callers that need a value twice keep the result: parsing is the
 * expensive part of normalization.
 */
export function json(v: AttrValue | undefined): unknown {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return v;
  const c = v.charCodeAt(0);
  // only objects, arrays and quoted strings are worth a parse attempt
  if (c !== 123 /* { */ && c !== 91 /* [ */ && c !== 34 /* " */) return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** A plain object (not an array), for narrowing parsed JSON. */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The size of a content value in characters: strings by length, anything else as JSON. */
export function sizeOf(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'string') return v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v).length;
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * The size of message content in characters, as the model reads it: a string by length;
 * content blocks (`[{ type: 'text', text }]`, MCP `{ content: [...] }`) by their text; any
 * other value as JSON.
 */
export function contentSize(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) {
    let n = 0;
    for (const b of v) {
      if (typeof b === 'string') n += b.length;
      else if (isObj(b) && typeof b['text'] === 'string') n += b['text'].length;
      else if (isObj(b) && typeof b['content'] === 'string') n += b['content'].length;
      else n += sizeOf(b);
    }
    return n;
  }
  if (isObj(v)) {
    if (typeof v['text'] === 'string' && (v['type'] === 'text' || Object.keys(v).length === 1)) {
      return v['text'].length;
    }
    if (Array.isArray(v['content'])) return contentSize(v['content']);
  }
  return sizeOf(v);
}

/**
 * The size of a tool result attribute (`gen_ai.tool.call.result`, `ai.toolCall.result`, ...):
 * a JSON-encoded string is decoded first (Vercel stringifies the tool output), content blocks
 * count by their text (see `contentSize`); anything else as sent.
 */
export function resultAttrSize(v: AttrValue | undefined): number {
  if (typeof v === 'string') {
    const c = v.charCodeAt(0);
    if (c === 34 /* " */ || c === 91 /* [ */ || c === 123 /* { */) {
      const parsed = json(v);
      if (parsed !== undefined) return contentSize(parsed);
    }
    return v.length;
  }
  return contentSize(v);
}

/** A string field of a parsed object. */
export function field(o: Record<string, unknown>, key: string): string | null {
  const v = o[key];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** A numeric field of a parsed object (numbers or numeric strings). */
export function numField(o: Record<string, unknown>, key: string): number | null {
  const v = o[key];
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Unix ns (decimal string) from milliseconds. */
export function msToNs(ms: number): string {
  return (BigInt(Math.round(ms)) * 1_000_000n).toString();
}

/** Unix ns (decimal string) of an ISO 8601 time, or null when it is absent or does not parse. */
export function isoToNs(iso: string | null): string | null {
  const ms = iso === null ? NaN : Date.parse(iso);
  return Number.isFinite(ms) ? msToNs(ms) : null;
}

/** `ns - ms` as a decimal ns string; returns `ns` unchanged when it is not an integer string. */
export function minusMs(ns: string, ms: number): string {
  try {
    const r = BigInt(ns) - BigInt(Math.round(ms * 1_000_000));
    return r < 0n ? '0' : r.toString();
  } catch {
    return ns;
  }
}

/** Compares two decimal ns strings numerically. */
export function cmpNs(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
