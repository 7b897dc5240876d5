/**
 * The messages a Claude Code transcript says each call's input held, for What was lost (issue 36
 * §5): a transcript has the whole conversation, so the calls on either side of a drop can carry
 * their input as telemetry with captured content would (`gen_ai.input.messages`, OTel GenAI
 * message parts), and src/reading/what-was-lost.ts shows the text of the messages dropped.
 *
 * Only the calls at a drop keep their messages: the last call of a stream before a
 * `compact_boundary` and the first after it, and two calls of a stream whose usage fell between
 * them. Every other call would store the whole history again (a session's storage would grow
 * with the square of its length). Each part's text is cut at {@link MAX_MESSAGE_TEXT}
 * characters, what the console shows of a message, which also bounds what a drop stores.
 * Only with the workspace capturing content (the caller checks). Pure: no I/O.
 */
import type { LlmCall } from '../model/calls.ts';
import { isObj } from './attrs.ts';
import { MAX_MESSAGE_TEXT } from './message-text.ts';

type Obj = Record<string, unknown>;

const cut = (text: string) =>
  text.length > MAX_MESSAGE_TEXT ? text.slice(0, MAX_MESSAGE_TEXT) : text;
const textOf = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : Array.isArray(v)
      ? v.map((b) => (isObj(b) && typeof b['text'] === 'string' ? b['text'] : '')).join('')
      : v === undefined || v === null
        ? ''
        : JSON.stringify(v);

/** A transcript line's message (Messages API content) as an OTel GenAI input message. */
export function genAiMessage(role: string, content: unknown): Obj {
  if (!Array.isArray(content))
    return { role, parts: [{ type: 'text', content: cut(textOf(content)) }] };
  const parts: Obj[] = [];
  for (const block of content) {
    if (!isObj(block)) continue;
    switch (block['type']) {
      case 'text':
        parts.push({ type: 'text', content: cut(textOf(block['text'])) });
        break;
      case 'tool_use':
        parts.push({
          type: 'tool_call',
          id: block['id'] ?? null,
          name: block['name'] ?? null,
          arguments: cut(JSON.stringify(block['input'] ?? {})),
        });
        break;
      case 'tool_result':
        parts.push({
          type: 'tool_call_response',
          id: block['tool_use_id'] ?? null,
          response: cut(textOf(block['content'])),
        });
        break;
      // thinking, images, documents: not text a reader of a drop needs
    }
  }
  return { role, parts };
}

/** One stream's history since its last boundary, and its last call. */
interface StreamHistory {
  messages: Obj[];
  last: { call: LlmCall; messages: Obj[]; length: number } | null;
  /** Set by a boundary: the next call is the first after it. */
  afterBoundary: boolean;
}

/** Collects each stream's messages and keeps them on the calls at a drop. */
export class TranscriptMessages {
  readonly #streams = new Map<string, StreamHistory>();
  /** The calls to keep messages on, with the history they saw. */
  readonly #kept = new Map<LlmCall, { messages: Obj[]; length: number }>();

  #stream(key: string): StreamHistory {
    let s = this.#streams.get(key);
    if (s === undefined)
      this.#streams.set(key, (s = { messages: [], last: null, afterBoundary: false }));
    return s;
  }

  /** A user or assistant line of the stream, after any call it starts. */
  add(streamKey: string, role: string, content: unknown): void {
    this.#stream(streamKey).messages.push(genAiMessage(role, content));
  }

  /** A new call of the stream: its input is the history so far. */
  call(streamKey: string, call: LlmCall): void {
    const s = this.#stream(streamKey);
    const seen = { call, messages: s.messages, length: s.messages.length };
    const before = s.last;
    const fell =
      before !== null &&
      before.call.contextTokens !== null &&
      call.contextTokens !== null &&
      call.contextTokens < before.call.contextTokens;
    if (s.afterBoundary || fell) this.#kept.set(call, seen);
    if (fell && before) this.#kept.set(before.call, before);
    s.afterBoundary = false;
    s.last = seen;
  }

  /** A compaction of the stream: the call before keeps its history, a new history starts. */
  boundary(streamKey: string): void {
    const s = this.#stream(streamKey);
    if (s.last) this.#kept.set(s.last.call, s.last);
    s.messages = [];
    s.afterBoundary = true;
  }

  /** Sets `inputMessages` on the calls at a drop. */
  finish(): void {
    for (const [call, { messages, length }] of this.#kept)
      call.inputMessages = { 'gen_ai.input.messages': messages.slice(0, length) };
  }
}
