/**
 * `rotscope statusline`: the Claude Code status line command. Claude Code pipes its status
 * JSON to stdin after each assistant message; this prints one line with how full the
 * context window is. Usage comes from `context_window.current_usage` when Claude Code sends
 * it, else from the last main-thread assistant entry of the transcript, read from the end of
 * the file (so a 1 GB transcript costs what a 1 MB one does).
 */
import { open } from 'node:fs/promises';
import { contextWindowFor } from '../ingest/windows.ts';

const CHUNK = 64 * 1024;
/** Stop looking back after this much of the transcript. */
const MAX_SCAN = 8 * 1024 * 1024;
const BAR_WIDTH = 10;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export interface ContextReading {
  tokens: number;
  window: number | null;
  model: string | null;
}

/** Input + cache creation + cache read: everything sent (Anthropic's input excludes cache). */
function usageTokens(usage: Obj): number {
  return (
    num(usage.input_tokens) +
    num(usage.cache_creation_input_tokens) +
    num(usage.cache_read_input_tokens)
  );
}

/** The last main-thread assistant entry with usage, reading the transcript backwards in chunks. */
export async function lastUsageFromTranscript(
  path: string,
): Promise<{ tokens: number; model: string | null } | undefined> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const { size } = await file.stat();
    let end = size;
    let carry = '';
    while (end > 0 && size - end < MAX_SCAN) {
      const start = Math.max(0, end - CHUNK);
      const buffer = Buffer.alloc(end - start);
      await file.read(buffer, 0, buffer.length, start);
      const text = buffer.toString('utf8') + carry;
      const lines = text.split('\n');
      carry = start > 0 ? (lines.shift() ?? '') : '';
      for (let i = lines.length - 1; i >= 0; i--) {
        const line = lines[i]!;
        if (!line.includes('"assistant"') || !line.includes('"usage"')) continue;
        let entry: Obj | undefined;
        try {
          entry = obj(JSON.parse(line));
        } catch {
          continue;
        }
        const message = obj(entry?.message);
        const usage = obj(message?.usage);
        if (!entry || entry.type !== 'assistant' || entry.isSidechain === true || !usage) continue;
        if (message?.model === '<synthetic>') continue;
        return {
          tokens: usageTokens(usage),
          model: typeof message?.model === 'string' ? message.model : null,
        };
      }
      end = start;
    }
    return undefined;
  } finally {
    await file.close();
  }
}

/** Reads the context usage from Claude Code's status JSON, falling back to the transcript. */
export async function readContext(status: Obj): Promise<ContextReading | undefined> {
  const model = obj(status.model);
  const modelId = typeof model?.id === 'string' ? model.id : null;
  const windowInfo = obj(status.context_window);
  const declaredWindow = num(windowInfo?.context_window_size) || null;
  const current = obj(windowInfo?.current_usage);
  let tokens: number | undefined = current ? usageTokens(current) : undefined;
  let seenModel = modelId;
  if (tokens === undefined && typeof status.transcript_path === 'string') {
    const last = await lastUsageFromTranscript(status.transcript_path);
    if (last) {
      tokens = last.tokens;
      seenModel ??= last.model;
    }
  }
  if (tokens === undefined) return undefined;
  const window = declaredWindow ?? contextWindowFor(seenModel, tokens, []).window;
  return { tokens, window, model: seenModel };
}

/** One line: a bar, the percentage, tokens of the window; a warning sign from 70%. */
export function formatStatusLine(reading: ContextReading | undefined): string {
  if (!reading) return 'ctx –';
  const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n.toLocaleString('en-US'));
  if (!reading.window) return `ctx ${k(reading.tokens)} tokens`;
  const share = reading.tokens / reading.window;
  const filled = Math.min(BAR_WIDTH, Math.round(share * BAR_WIDTH));
  const bar = '▰'.repeat(filled) + '▱'.repeat(BAR_WIDTH - filled);
  const warn = share >= 0.85 ? '‼ ' : share >= 0.7 ? '⚠ ' : '';
  return `${warn}ctx ${bar} ${Math.floor(share * 100)}% (${k(reading.tokens)}/${k(reading.window)})`;
}

export async function statuslineCommand(
  stdin: string,
  io: { stdout: (text: string) => void },
): Promise<number> {
  let status: Obj | undefined;
  try {
    status = obj(JSON.parse(stdin));
  } catch {
    status = undefined;
  }
  // A status line must always print something: bad input shows the empty reading.
  io.stdout(`${formatStatusLine(status ? await readContext(status) : undefined)}\n`);
  return 0;
}
