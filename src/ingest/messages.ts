/**
 * One message model for every content format (conventions §9.6–9.7): semconv parts,
 * OpenInference and Traceloop indexed attributes, Vercel prompts, raw provider requests
 * (OpenAI / Anthropic, also Claude Code transcripts). Only sizes, ids and names are kept.
 */
import type { AttrValue, Attributes } from '../model/telemetry.ts';
import { contentSize, field, isObj, json, sizeOf } from './attrs.ts';

/** One content block of a message, reduced to what the parts need. */
export interface Block {
  kind: 'text' | 'tool_call' | 'tool_result' | 'compaction' | 'other';
  /** Size in characters. */
  size: number;
  /** Tool call id (tool_call and tool_result), compaction part id. */
  id: string | null;
  /** Tool name (tool_call; tool_result when the format names it inline). */
  name: string | null;
  /** Compaction summary text, when sent. */
  text: string | null;
}

/** A message: its role and blocks. */
export interface Msg {
  role: string;
  blocks: Block[];
}

function block(
  kind: Block['kind'],
  size: number,
  id: string | null = null,
  name: string | null = null,
): Block {
  return { kind, size, id, name, text: null };
}

// ---- OTel semconv `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`

function semconvPart(p: unknown): Block {
  if (typeof p === 'string') return block('text', p.length);
  if (!isObj(p)) return block('other', sizeOf(p));
  switch (p['type']) {
    case 'text':
    case 'reasoning':
      return block('text', sizeOf(p['content']));
    case 'tool_call':
    case 'server_tool_call':
      return block(
        'tool_call',
        sizeOf(p['arguments']) + sizeOf(p['name']),
        field(p, 'id'),
        field(p, 'name'),
      );
    case 'tool_call_response':
    case 'server_tool_call_response':
      return block(
        'tool_result',
        contentSize(p['response'] ?? p['result'] ?? p['server_tool_call_response']),
        field(p, 'id'),
        field(p, 'name'),
      );
    case 'compaction':
    case 'anthropic_compaction': {
      // the Anthropic SDK names parts without a semconv type `anthropic_<block type>`
      const c = p['content'];
      const b = block('compaction', sizeOf(c), field(p, 'id'));
      b.text = typeof c === 'string' ? c : null;
      return b;
    }
    case 'blob': {
      const bs = p['byte_size'];
      return block('other', typeof bs === 'number' ? bs : sizeOf(p['content']));
    }
    default:
      return block('other', sizeOf(p['content'] ?? p));
  }
}

/** Messages of a parsed `gen_ai.input.messages` / `gen_ai.output.messages` value. */
export function fromSemconv(parsed: unknown): Msg[] | null {
  if (!Array.isArray(parsed)) return null;
  const out: Msg[] = [];
  for (const m of parsed) {
    if (!isObj(m)) continue;
    const role = field(m, 'role') ?? 'user';
    const parts = m['parts'];
    if (Array.isArray(parts)) out.push({ role, blocks: parts.map(semconvPart) });
    else out.push({ role, blocks: [block('text', sizeOf(m['content']))] });
  }
  return out;
}

/** Size of a parsed `gen_ai.system_instructions` value (sum of text parts; a string as is). */
export function systemInstructionsSize(parsed: unknown, raw: AttrValue): number {
  if (Array.isArray(parsed)) {
    let n = 0;
    for (const p of parsed) n += isObj(p) ? sizeOf(p['content']) : sizeOf(p);
    return n;
  }
  return typeof raw === 'string' ? raw.length : sizeOf(raw);
}

// ---- raw provider requests (OpenAI chat / Anthropic messages), Vercel prompts, transcripts

function providerBlock(b: unknown): Block {
  if (typeof b === 'string') return block('text', b.length);
  if (!isObj(b)) return block('other', sizeOf(b));
  switch (b['type']) {
    case 'text':
      return block('text', sizeOf(b['text']));
    case 'thinking':
      return block('text', sizeOf(b['thinking']));
    case 'redacted_thinking':
      return block('other', sizeOf(b['data']));
    case 'tool_use':
    case 'server_tool_use':
      return block(
        'tool_call',
        sizeOf(b['input']) + sizeOf(b['name']),
        field(b, 'id'),
        field(b, 'name'),
      );
    case 'tool_result':
    case 'web_search_tool_result':
      return block('tool_result', contentSize(b['content']), field(b, 'tool_use_id'), null);
    // Vercel LanguageModel prompt parts
    case 'tool-call':
      return block(
        'tool_call',
        sizeOf(b['input'] ?? b['args']) + sizeOf(b['toolName']),
        field(b, 'toolCallId'),
        field(b, 'toolName'),
      );
    case 'tool-result': {
      const o = b['output'];
      const v = isObj(o) && 'value' in o ? o['value'] : (o ?? b['result']);
      return block('tool_result', contentSize(v), field(b, 'toolCallId'), field(b, 'toolName'));
    }
    case 'compaction': {
      const c = b['content'];
      const r = block('compaction', sizeOf(c), field(b, 'id'));
      r.text = typeof c === 'string' ? c : null;
      return r;
    }
    case 'image':
    case 'document':
    case 'file':
      return block('other', sizeOf(b['source'] ?? b['data'] ?? b['image_url']));
    case 'image_url':
      return block('other', sizeOf(b['image_url']));
    default:
      return block('other', sizeOf(b['text'] ?? b['content'] ?? b));
  }
}

/** One raw-provider (or Vercel, or transcript) message. */
export function fromProviderMessage(m: Record<string, unknown>): Msg {
  const role = field(m, 'role') ?? 'user';
  const content = m['content'];
  const blocks: Block[] = [];
  if (role === 'tool') {
    // OpenAI tool message: the whole content is one tool result
    const id = field(m, 'tool_call_id');
    if (id !== null || !Array.isArray(content)) {
      blocks.push(block('tool_result', contentSize(content), id, field(m, 'name')));
      return { role, blocks };
    }
  }
  if (typeof content === 'string') blocks.push(block('text', content.length));
  else if (Array.isArray(content)) for (const b of content) blocks.push(providerBlock(b));
  else if (content !== undefined && content !== null) blocks.push(block('other', sizeOf(content)));
  const calls = m['tool_calls'];
  if (Array.isArray(calls)) {
    for (const c of calls) {
      if (!isObj(c)) continue;
      const fn = isObj(c['function']) ? c['function'] : c;
      blocks.push(
        block(
          'tool_call',
          sizeOf(fn['arguments']) + sizeOf(fn['name']),
          field(c, 'id'),
          field(fn, 'name'),
        ),
      );
    }
  }
  return { role, blocks };
}

/**
 * A parsed raw request (OpenInference `input.value`, Vercel `ai.prompt.messages`): an
 * array of messages, or `{ system?, messages }`. Top-level `system` becomes a system message.
 */
export function fromProviderRequest(parsed: unknown): Msg[] | null {
  let list: unknown = parsed;
  const out: Msg[] = [];
  if (isObj(parsed)) {
    const sys = parsed['system'];
    if (sys !== undefined && sys !== null) {
      const blocks = Array.isArray(sys) ? sys.map(providerBlock) : [block('text', sizeOf(sys))];
      out.push({ role: 'system', blocks });
    }
    list = parsed['messages'] ?? parsed['input'];
    if (typeof list === 'string') {
      out.push({ role: 'user', blocks: [block('text', list.length)] });
      return out;
    }
  }
  if (!Array.isArray(list)) return out.length > 0 ? out : null;
  for (const m of list) if (isObj(m)) out.push(fromProviderMessage(m));
  return out;
}

// ---- indexed attributes (OpenInference `llm.input_messages.N.*`, Traceloop `gen_ai.prompt.N.*`)

/** Index → (sub-key → value) for keys `${prefix}${N}.${rest}`. */
export type Indexed = Map<number, Map<string, AttrValue>>;

/** The indexed families an LLM span may carry, collected in one pass over its keys. */
export interface IndexedFamilies {
  oiIn: Indexed | null;
  oiOut: Indexed | null;
  tlIn: Indexed | null;
  tlOut: Indexed | null;
}

function put(fam: Indexed | null, key: string, from: number, value: AttrValue): Indexed | null {
  const dot = key.indexOf('.', from);
  if (dot < 0) return fam;
  const idx = Number(key.slice(from, dot));
  if (!Number.isInteger(idx)) return fam;
  const f = fam ?? new Map<number, Map<string, AttrValue>>();
  let m = f.get(idx);
  if (m === undefined) {
    m = new Map();
    f.set(idx, m);
  }
  m.set(key.slice(dot + 1), value);
  return f;
}

const OI_IN = 'llm.input_messages.';
const OI_OUT = 'llm.output_messages.';
const TL_IN = 'gen_ai.prompt.';
const TL_OUT = 'gen_ai.completion.';

/** Collects the indexed message families of a span in a single pass over its keys. */
export function scanIndexed(attrs: Attributes): IndexedFamilies {
  const r: IndexedFamilies = { oiIn: null, oiOut: null, tlIn: null, tlOut: null };
  for (const k in attrs) {
    const c = k.charCodeAt(0);
    if (c === 108 /* l */) {
      if (k.startsWith(OI_IN)) r.oiIn = put(r.oiIn, k, OI_IN.length, attrs[k] as AttrValue);
      else if (k.startsWith(OI_OUT))
        r.oiOut = put(r.oiOut, k, OI_OUT.length, attrs[k] as AttrValue);
    } else if (c === 103 /* g */) {
      if (k.startsWith(TL_IN)) r.tlIn = put(r.tlIn, k, TL_IN.length, attrs[k] as AttrValue);
      else if (k.startsWith(TL_OUT))
        r.tlOut = put(r.tlOut, k, TL_OUT.length, attrs[k] as AttrValue);
    }
  }
  return r;
}

function sorted(fam: Indexed): Array<Map<string, AttrValue>> {
  return [...fam.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

function subIndexed(m: Map<string, AttrValue>, prefix: string): Indexed {
  let f: Indexed | null = null;
  for (const [k, v] of m) if (k.startsWith(prefix)) f = put(f, k, prefix.length, v);
  return f ?? new Map();
}

function s(v: AttrValue | undefined): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** Messages from OpenInference `llm.{input,output}_messages.N.message.*` attributes. */
export function fromOpenInference(fam: Indexed): Msg[] {
  const out: Msg[] = [];
  for (const m of sorted(fam)) {
    const role = s(m.get('message.role')) ?? 'user';
    const blocks: Block[] = [];
    const toolCallId = s(m.get('message.tool_call_id'));
    const content = m.get('message.content');
    if (role === 'tool' || toolCallId !== null) {
      let size = content === undefined ? 0 : sizeOf(content);
      for (const c of sorted(subIndexed(m, 'message.contents.')))
        size += sizeOf(c.get('message_content.text'));
      blocks.push(block('tool_result', size, toolCallId, s(m.get('message.name'))));
    } else {
      if (content !== undefined) blocks.push(block('text', sizeOf(content)));
      for (const c of sorted(subIndexed(m, 'message.contents.'))) {
        const t = c.get('message_content.text');
        blocks.push(
          block(
            t === undefined ? 'other' : 'text',
            sizeOf(t ?? c.get('message_content.image.image.url')),
          ),
        );
      }
    }
    for (const c of sorted(subIndexed(m, 'message.tool_calls.'))) {
      const name = s(c.get('tool_call.function.name'));
      blocks.push(
        block(
          'tool_call',
          sizeOf(c.get('tool_call.function.arguments')) + sizeOf(name),
          s(c.get('tool_call.id')),
          name,
        ),
      );
    }
    out.push({ role, blocks });
  }
  return out;
}

/**
 * Messages from Traceloop legacy `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`. Anthropic
 * list content is JSON-dumped into `.content`, so a content that parses as a block array is
 * read as blocks (`tool_result` with `tool_use_id`, `tool_use` with `id`/`name`).
 */
export function fromTraceloop(fam: Indexed): Msg[] {
  const out: Msg[] = [];
  for (const m of sorted(fam)) {
    const role = s(m.get('role')) ?? 'user';
    const content = m.get('content');
    const toolCallId = s(m.get('tool_call_id'));
    const blocks: Block[] = [];
    if (role === 'tool' || toolCallId !== null) {
      blocks.push(block('tool_result', sizeOf(content), toolCallId, s(m.get('name'))));
    } else if (typeof content === 'string' && content.charCodeAt(0) === 91 /* [ */) {
      const parsed = json(content);
      if (Array.isArray(parsed)) for (const b of parsed) blocks.push(providerBlock(b));
      else blocks.push(block('text', content.length));
    } else if (content !== undefined) {
      blocks.push(block('text', sizeOf(content)));
    }
    for (const c of sorted(subIndexed(m, 'tool_calls.'))) {
      const name = s(c.get('name'));
      blocks.push(
        block('tool_call', sizeOf(c.get('arguments')) + sizeOf(name), s(c.get('id')), name),
      );
    }
    out.push({ role, blocks });
  }
  return out;
}
