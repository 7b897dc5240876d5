/**
 * Input parts from sizes an application reports without content (@rotscope/sdk,
 * `rotscope.input.sizes` on an LLM span): a JSON object `{ unit, system, messages, tools }` with
 * the system prompt's size, the messages' size (tool results included) and the size of each
 * tool's results present in the input, in characters (`chars`, or `bytes`, read as characters)
 * or `tokens`. Lets tool_takeover and What was lost work with content capture off.
 */
import type { InputParts } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { json } from './attrs.ts';

export const INPUT_SIZES_ATTRIBUTE = 'rotscope.input.sizes';

function size(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/** The parts the sizes attribute reports, or null when absent or unreadable. */
export function partsFromInputSizes(attrs: Attributes): InputParts | null {
  const raw = attrs[INPUT_SIZES_ATTRIBUTE];
  if (typeof raw !== 'string') return null;
  const v = json(raw);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const unit =
    o['unit'] === 'tokens'
      ? 'tokens'
      : o['unit'] === 'chars' || o['unit'] === 'bytes'
        ? 'chars'
        : null;
  if (unit === null) return null;
  const tools: Record<string, number> = {};
  const t = o['tools'];
  if (typeof t === 'object' && t !== null && !Array.isArray(t)) {
    for (const [name, s] of Object.entries(t as Record<string, unknown>)) {
      const n = size(s);
      if (n !== null && n > 0) tools[name] = n;
    }
  }
  const system = size(o['system']);
  const messages = size(o['messages']);
  return {
    unit,
    total: messages === null ? null : messages + (system ?? 0),
    system,
    tools,
    source: 'messages',
  };
}
