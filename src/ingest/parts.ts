/**
 * Input parts of one call (conventions §9.6–9.7): system prompt size and each tool's result
 * size, from message content when present; whether the output holds a tool call; the
 * compaction parts of the input and output. Sizes are characters.
 */
import type { InputParts } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { isObj, json } from './attrs.ts';
import {
  fromOpenInference,
  fromProviderMessage,
  fromProviderRequest,
  fromSemconv,
  fromTraceloop,
  scanIndexed,
  systemInstructionsSize,
  type Block,
  type Msg,
} from './messages.ts';

/** A compaction part found in a call's input or output. */
export interface CompactionPart {
  id: string | null;
  size: number;
  text: string | null;
}

/** Everything the content of one LLM span says. */
export interface ContentAnalysis {
  parts: InputParts | null;
  outputToolCall: boolean;
  outputToolName: string | null;
  inputCompaction: CompactionPart | null;
  outputCompaction: CompactionPart | null;
  /** Parsed `gen_ai.output.messages` (for the deprecated message-level finish_reason). */
  outputMessagesParsed: unknown;
}

/**
 * Sizes of the parts of an input from its messages. Tool results are attributed by name:
 * inline, else by joining their call id to an earlier tool call, else by message order: a
 * result without id takes the name of the next unanswered call of the latest message with
 * tool calls (OpenInference's LangChain spans flatten messages without any call id).
 * `extraSystem` is a system prompt sent beside the messages (`gen_ai.system_instructions`),
 * null when not sent.
 */
export function partsFromMessages(msgs: readonly Msg[], extraSystem: number | null): InputParts {
  const names = new Map<string, string>();
  for (const m of msgs) {
    for (const b of m.blocks)
      if (b.kind === 'tool_call' && b.id !== null && b.name !== null) names.set(b.id, b.name);
  }
  let system = extraSystem ?? 0;
  let total = extraSystem ?? 0;
  const tools: Record<string, number> = {};
  // names of the latest message's tool calls not answered yet, in call order
  let pending: Array<string | null> = [];
  for (const m of msgs) {
    const isSystem = m.role === 'system' || m.role === 'developer';
    const calls = m.blocks.filter((b) => b.kind === 'tool_call');
    if (calls.length > 0) pending = calls.map((b) => b.name);
    for (const b of m.blocks) {
      total += b.size;
      if (isSystem) system += b.size;
      if (b.kind === 'tool_result') {
        const byId = b.id !== null ? names.get(b.id) : undefined;
        const byOrder = b.id === null ? pending.shift() : undefined;
        const name = b.name ?? byId ?? byOrder ?? 'unknown';
        tools[name] = (tools[name] ?? 0) + b.size;
      }
    }
  }
  return { unit: 'chars', total, system, tools, source: 'messages' };
}

function firstCompaction(msgs: readonly Msg[] | null): CompactionPart | null {
  if (msgs === null) return null;
  let found: Block | null = null;
  for (const m of msgs) for (const b of m.blocks) if (b.kind === 'compaction') found = b;
  return found === null ? null : { id: found.id, size: found.size, text: found.text };
}

function lastToolCall(msgs: readonly Msg[] | null): { found: boolean; name: string | null } {
  let found = false;
  let name: string | null = null;
  if (msgs === null) return { found, name };
  for (const m of msgs) {
    for (const b of m.blocks) {
      if (b.kind === 'tool_call') {
        found = true;
        name = b.name ?? name;
      }
    }
  }
  return { found, name };
}

/** Vercel legacy `ai.response.toolCalls`: `[{ toolCallId, toolName, args }]`. */
function vercelToolCalls(attrs: Attributes): Msg[] | null {
  const raw = attrs['ai.response.toolCalls'];
  if (raw === undefined) return null;
  const parsed = json(raw);
  if (!Array.isArray(parsed)) return null;
  const blocks: Block[] = [];
  for (const c of parsed) {
    if (!isObj(c)) continue;
    const name = typeof c['toolName'] === 'string' ? c['toolName'] : null;
    blocks.push({ kind: 'tool_call', size: 0, id: null, name, text: null });
  }
  return [{ role: 'assistant', blocks }];
}

/**
 * Langfuse `langfuse.observation.output` of a generation: the provider's message object
 * (`{ role, content, tool_calls }`), or the text alone for a streamed answer.
 */
function langfuseOutput(attrs: Attributes): Msg[] | null {
  const raw = attrs['langfuse.observation.output'];
  if (raw === undefined) return null;
  const parsed = json(raw);
  if (isObj(parsed)) return [fromProviderMessage(parsed)];
  if (Array.isArray(parsed)) return fromProviderRequest(parsed);
  const text = typeof parsed === 'string' ? parsed : typeof raw === 'string' ? raw : '';
  return [
    {
      role: 'assistant',
      blocks: [{ kind: 'text', size: text.length, id: null, name: null, text: null }],
    },
  ];
}

/**
 * Reads the content of an LLM span, first format present wins for the input:
 * `gen_ai.input.messages` (+ `gen_ai.system_instructions`), OpenInference
 * `llm.input_messages.N.*`, Traceloop `gen_ai.prompt.N.*`, Vercel `ai.prompt.messages`,
 * OpenInference raw `input.value`, Langfuse `langfuse.observation.input` (the request's
 * `{ messages }`). Each JSON attribute is parsed at most once.
 */
export function analyzeContent(attrs: Attributes): ContentAnalysis {
  const fam = scanIndexed(attrs);
  let inputMsgs: Msg[] | null = null;
  let extraSystem: number | null = null;

  const inRaw = attrs['gen_ai.input.messages'];
  const sysRaw = attrs['gen_ai.system_instructions'];
  if (inRaw !== undefined || sysRaw !== undefined) {
    inputMsgs = inRaw === undefined ? [] : fromSemconv(json(inRaw));
    if (sysRaw !== undefined && sysRaw !== null)
      extraSystem = systemInstructionsSize(json(sysRaw), sysRaw);
  }
  if (inputMsgs === null && fam.oiIn !== null) inputMsgs = fromOpenInference(fam.oiIn);
  if (inputMsgs === null && fam.tlIn !== null) inputMsgs = fromTraceloop(fam.tlIn);
  if (inputMsgs === null) {
    const v = attrs['ai.prompt.messages'];
    if (v !== undefined) inputMsgs = fromProviderRequest(json(v));
  }
  if (inputMsgs === null) {
    const v = attrs['input.value'] ?? attrs['langfuse.observation.input'];
    if (v !== undefined) inputMsgs = fromProviderRequest(json(v));
  }

  const outRaw = attrs['gen_ai.output.messages'];
  const outputMessagesParsed = outRaw === undefined ? undefined : json(outRaw);
  let outputMsgs: Msg[] | null = outRaw === undefined ? null : fromSemconv(outputMessagesParsed);
  if (outputMsgs === null && fam.oiOut !== null) outputMsgs = fromOpenInference(fam.oiOut);
  if (outputMsgs === null && fam.tlOut !== null) outputMsgs = fromTraceloop(fam.tlOut);
  if (outputMsgs === null) outputMsgs = vercelToolCalls(attrs);
  if (outputMsgs === null) outputMsgs = langfuseOutput(attrs);

  const tc = lastToolCall(outputMsgs);
  return {
    parts: inputMsgs === null ? null : partsFromMessages(inputMsgs, extraSystem),
    outputToolCall: tc.found,
    outputToolName: tc.name,
    inputCompaction: firstCompaction(inputMsgs),
    outputCompaction: firstCompaction(outputMsgs),
    outputMessagesParsed,
  };
}
