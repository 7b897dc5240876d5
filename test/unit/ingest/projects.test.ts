/**
 * Where a conversation runs (its project, src/ingest/projects.ts): which attribute names it and
 * in what order, how long it may be, and the `projects` each reader yields: spans (a call's
 * resource, the `rotscope.session` span rotscope's Claude Code hook sends), Claude Code
 * transcripts (each line's `cwd`, the latest per conversation) and Codex session files
 * (`session_meta`: the git remote, else `cwd`), on real files where there are some
 * (test/fixtures/real/*, see their PROVENANCE.md and INDEX.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sessionSpan } from '../../../src/cli/hook-otlp.ts';
import { msToNs } from '../../../src/ingest/attrs.ts';
import { normalizeCodexSession } from '../../../src/ingest/codex-sessions.ts';
import { normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import { projectOf, projectReport, SESSION_SPAN_NAME } from '../../../src/ingest/projects.ts';
import { latestProjects } from '../../../src/model/calls.ts';
import { decodeTraces } from '../../../src/otlp/decode.ts';
import { CTX, span } from './helpers.ts';

const REAL = join(import.meta.dirname, '../../fixtures/real');
const REPO = 'vcs.repository.url.full';
const DIR = 'process.working_directory';

describe('projectOf', () => {
  it('is null when no attribute names a project', () => {
    expect(projectOf()).toBeNull();
    expect(projectOf({}, {})).toBeNull();
    expect(projectOf({ 'service.name': 'claude-code', cwd: '/not/a/convention' })).toBeNull();
  });

  it('reads the working directory, and the repository, from any of the sets', () => {
    expect(projectOf({}, { [DIR]: '/home/dev/acme/api' })).toBe('/home/dev/acme/api');
    expect(projectOf({ [REPO]: 'https://github.com/acme/api' }, {})).toBe(
      'https://github.com/acme/api',
    );
  });

  it("takes the first set's value of a key (a span's own before its resource's)", () => {
    const spanAttrs = { [DIR]: '/span/dir' };
    const resource = { [DIR]: '/resource/dir' };
    expect(projectOf(spanAttrs, resource)).toBe('/span/dir');
    expect(projectOf(resource, spanAttrs)).toBe('/resource/dir');
    expect(projectOf({ [REPO]: 'https://a/x' }, { [REPO]: 'https://b/y' })).toBe('https://a/x');
  });

  it('takes the repository before the directory, whichever set each is on', () => {
    expect(projectOf({ [DIR]: '/span/dir', [REPO]: 'https://git/acme/api.git' })).toBe(
      'https://git/acme/api.git',
    );
    // the directory on the span itself, the repository only on the resource: the repository
    expect(projectOf({ [DIR]: '/span/dir' }, { [REPO]: 'git@github.com:acme/api.git' })).toBe(
      'git@github.com:acme/api.git',
    );
  });

  it('skips empty and non-string values', () => {
    expect(projectOf({ [REPO]: '' }, { [DIR]: '/dir' })).toBe('/dir');
    expect(projectOf({ [REPO]: 42, [DIR]: true })).toBeNull();
    expect(projectOf({ [DIR]: ['/a', '/b'] }, { [DIR]: '/c' })).toBe('/c');
    expect(projectOf({ [DIR]: '' })).toBeNull();
  });

  it('cuts a value at 512 characters (a label, not a payload)', () => {
    const exact = `/${'a'.repeat(511)}`;
    expect(projectOf({ [DIR]: exact })).toBe(exact);
    const long = `/${'b'.repeat(2_000)}`;
    expect(projectOf({ [DIR]: long })).toBe(long.slice(0, 512));
    expect(projectOf({}, { [REPO]: long })).toHaveLength(512);
  });
});

describe('projectReport', () => {
  it('is one report, cut at 512 characters; none for an unknown project', () => {
    expect(projectReport('c1', '/dir', '5')).toEqual([
      { conversationId: 'c1', project: '/dir', atNs: '5' },
    ]);
    expect(projectReport('c1', 'x'.repeat(600), '5')[0]!.project).toBe('x'.repeat(512));
    expect(projectReport('c1', null, '5')).toEqual([]);
    expect(projectReport('c1', undefined, '5')).toEqual([]);
    expect(projectReport('c1', '', '5')).toEqual([]);
  });
});

describe('latestProjects', () => {
  it('keeps the latest report per conversation (by time, the later one of equal times)', () => {
    expect(
      latestProjects([
        { conversationId: 'a', project: '/new', atNs: '20' },
        { conversationId: 'a', project: '/old', atNs: '10' },
        { conversationId: 'b', project: '/first', atNs: '100000000000000000001' },
        { conversationId: 'b', project: '/second', atNs: '100000000000000000001' },
        // BigInt order, not string order: 9 < 10
        { conversationId: 'c', project: '/ten', atNs: '10' },
        { conversationId: 'c', project: '/nine', atNs: '9' },
      ]),
    ).toEqual([
      { conversationId: 'a', project: '/new', atNs: '20' },
      { conversationId: 'b', project: '/second', atNs: '100000000000000000001' },
      { conversationId: 'c', project: '/ten', atNs: '10' },
    ]);
  });
});

/** A GenAI chat call of conversation `conversation` (a 100-token input). */
const chat = (conversation: string | null, p: Parameters<typeof span>[0] = {}) =>
  span({
    name: 'chat gpt-4o',
    ...p,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 10,
      ...(conversation === null ? {} : { 'gen_ai.conversation.id': conversation }),
      ...p.attributes,
    },
  });

describe('normalizeSpans: projects', () => {
  it("a call whose resource carries process.working_directory: its conversation's project, at the span's end", () => {
    const b = normalizeSpans(
      [
        chat('conv-dir', {
          endTimeUnixNano: '1700000000123000000',
          resource: { 'service.name': 'agent-app', [DIR]: '/srv/agents/acme-api' },
        }),
      ],
      CTX,
    );
    expect(b.normalized.calls).toHaveLength(1);
    expect(b.normalized.projects).toEqual([
      { conversationId: 'conv-dir', project: '/srv/agents/acme-api', atNs: '1700000000123000000' },
    ]);
  });

  it("the span's own attribute before its resource's; the repository before both", () => {
    const own = normalizeSpans(
      [chat('c-own', { attributes: { [DIR]: '/own' }, resource: { [DIR]: '/resource' } })],
      CTX,
    );
    expect(own.normalized.projects?.map((p) => p.project)).toEqual(['/own']);
    const repo = normalizeSpans(
      [
        chat('c-repo', {
          attributes: { [DIR]: '/own' },
          resource: { [REPO]: 'https://github.com/acme/api' },
        }),
      ],
      CTX,
    );
    expect(repo.normalized.projects?.map((p) => p.project)).toEqual([
      'https://github.com/acme/api',
    ]);
  });

  it('no project for a span without one, nor for a synthetic conversation (the trace id)', () => {
    expect(normalizeSpans([chat('c-none')], CTX).normalized.projects).toEqual([]);
    const synthetic = normalizeSpans([chat(null, { resource: { [DIR]: '/somewhere' } })], CTX);
    expect(synthetic.normalized.calls[0]!.conversationSynthetic).toBe(true);
    expect(synthetic.normalized.projects).toEqual([]);
  });

  it('the conversation id may come from the resource (§9.2), and so may the project', () => {
    const b = normalizeSpans(
      [chat(null, { resource: { 'session.id': 'resource-session', [DIR]: '/from/resource' } })],
      CTX,
    );
    expect(b.normalized.projects).toEqual([
      { conversationId: 'resource-session', project: '/from/resource', atNs: '2000000000000' },
    ]);
  });

  it("the hook's rotscope.session span, as sent over OTLP/HTTP JSON: the session and its directory, no call", () => {
    const body = sessionSpan({
      sessionId: 'sess-hook-1',
      cwd: '/home/dev/src/acme/api',
      atMs: 1_780_000_000_123,
    });
    const decoded = decodeTraces(JSON.stringify(body), 'json');
    if (!decoded.ok) throw new Error(decoded.reason);
    const spans = decoded.value.items;
    expect(spans.map((s) => s.name)).toEqual([SESSION_SPAN_NAME]);
    const b = normalizeSpans(spans, CTX);
    expect(b.dropped).toBe(0);
    expect(b.keep.map((s) => [s.name, s.role])).toEqual([[SESSION_SPAN_NAME, 'other']]);
    expect(b.normalized.calls).toEqual([]);
    expect(b.normalized.compactions).toEqual([]);
    expect(b.normalized.projects).toEqual([
      {
        conversationId: 'sess-hook-1',
        project: '/home/dev/src/acme/api',
        atNs: msToNs(1_780_000_000_123),
      },
    ]);
  });

  it('a rotscope.session span with session.id as its attribute, in a batch with Codex spans', () => {
    const b = normalizeSpans(
      [
        span({
          name: SESSION_SPAN_NAME,
          traceId: 'd'.repeat(32),
          endTimeUnixNano: '3000000000000',
          attributes: { 'session.id': 'sess-2' },
          resource: { 'service.name': 'claude-code', [DIR]: '/work/two' },
        }),
        span({ name: 'session_task.turn', resource: { 'service.name': 'codex_exec' } }),
      ],
      CTX,
    );
    expect(b.normalized.projects).toEqual([
      { conversationId: 'sess-2', project: '/work/two', atNs: '3000000000000' },
    ]);
  });

  it('a rotscope.session span without session.id names no conversation: no project', () => {
    const b = normalizeSpans(
      [span({ name: SESSION_SPAN_NAME, resource: { [DIR]: '/work/anonymous' } })],
      CTX,
    );
    expect(b.normalized.projects).toEqual([]);
  });
});

const SID = 'aaaaaaaa-1111-2222-3333-444444444444';
const OTHER = 'bbbbbbbb-1111-2222-3333-444444444444';
let lineNo = 0;
/** A transcript line: a user or assistant entry at second `at`. */
function entry(sessionId: string, at: number, cwd: string | undefined, assistant = false): string {
  lineNo++;
  return JSON.stringify({
    type: assistant ? 'assistant' : 'user',
    sessionId,
    uuid: `u${lineNo}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
    isSidechain: false,
    ...(cwd === undefined ? {} : { cwd }),
    message: assistant
      ? {
          id: `msg_${lineNo}`,
          model: 'claude-opus-4-6',
          role: 'assistant',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 5, cache_read_input_tokens: 1000, output_tokens: 3 },
        }
      : { role: 'user', content: 'hello' },
  });
}
const at = (second: number) => msToNs(Date.UTC(2026, 0, 1, 0, 0, second));

describe('normalizeTranscript: projects', () => {
  it("each conversation's latest cwd, reported at the first line that had it", () => {
    const text = [
      entry(SID, 1, '/home/dev/acme'),
      entry(SID, 2, '/home/dev/acme', true),
      entry(OTHER, 3, '/home/dev/other'),
      entry(SID, 4, '/home/dev/acme/api'),
      entry(SID, 5, '/home/dev/acme/api', true),
      entry(SID, 6, undefined), // a line without cwd changes nothing
    ].join('\n');
    const r = normalizeTranscript(text, CTX);
    expect(r.calls.map((c) => c.conversationId)).toEqual([SID, SID]);
    expect(r.projects).toEqual([
      { conversationId: SID, project: '/home/dev/acme/api', atNs: at(4) },
      { conversationId: OTHER, project: '/home/dev/other', atNs: at(3) },
    ]);
  });

  it('a session that went back to a directory ends there', () => {
    const text = [
      entry(SID, 1, '/a'),
      entry(SID, 2, '/b'),
      entry(SID, 3, '/a'),
      entry(SID, 4, '/a', true),
    ].join('\n');
    expect(normalizeTranscript(text, CTX).projects).toEqual([
      { conversationId: SID, project: '/a', atNs: at(3) },
    ]);
  });

  it('line times that step back: the last cwd written wins, timed at the latest line before it', () => {
    const text = [
      entry(SID, 3, '/a'),
      entry(SID, 2, '/b'), // written after /a, stamped earlier
      entry(SID, 4, '/b', true),
    ].join('\n');
    expect(normalizeTranscript(text, CTX).projects).toEqual([
      { conversationId: SID, project: '/b', atNs: at(3) },
    ]);
  });

  it('no cwd anywhere: no project', () => {
    const text = [entry(SID, 1, undefined), entry(SID, 2, undefined, true)].join('\n');
    expect(normalizeTranscript(text, CTX).projects).toEqual([]);
  });

  it('a real transcript that moved between directories: where it ended', () => {
    // INDEX.md: 438 lines, cwd anonymised to /path/to/Demo, /…/todo-app and /…/todo-app/types
    const text = readFileSync(join(REAL, 'claude-code_transcript_sidechains.jsonl'), 'utf8');
    const r = normalizeTranscript(text, CTX);
    expect(r.projects).toEqual([
      {
        conversationId: 'fe5e1c67-53e7-4862-81ae-d0e013e3270b',
        project: '/path/to/Demo',
        // the last run of lines in /path/to/Demo starts here (every later line is there too)
        atNs: msToNs(Date.parse('2025-09-03T01:01:44.806Z')),
      },
    ]);
  });

  it('a real Claude Code 2.1.332 transcript: its working directory', () => {
    const text = readFileSync(join(REAL, 'claude-code-2.1.332/reread/transcript.jsonl'), 'utf8');
    const r = normalizeTranscript(text, CTX);
    expect(r.projects?.map(({ conversationId, project }) => ({ conversationId, project }))).toEqual(
      [
        {
          conversationId: '843c48b1-ad59-49b1-80f8-fb9e02b8b6f6',
          project: '/tmp/cc-run-toolsearch.n1lueo/work',
        },
      ],
    );
    expect(new Set(r.calls.map((c) => c.conversationId))).toEqual(
      new Set(['843c48b1-ad59-49b1-80f8-fb9e02b8b6f6']),
    );
  });
});

/** The session file of a real Codex 0.171.0 scenario (test/fixtures/real/codex-0.171.0). */
function codexSession(scenario: string): { path: string; text: string } {
  const dir = join(REAL, 'codex-0.171.0', scenario);
  const file = readdirSync(dir).find((f) => f.startsWith('rollout-') && f.endsWith('.jsonl.br'))!;
  return {
    path: join(dir, file.slice(0, -'.br'.length)),
    text: brotliDecompressSync(readFileSync(join(dir, file))).toString('utf8'),
  };
}

/** A Codex session file's line, as far as its session_meta goes. */
interface SessionLine {
  type: string;
  timestamp: string;
  payload: { id: string; cwd: string; git?: unknown };
}

describe('normalizeCodexSession: projects', () => {
  const SCENARIOS = ['healthy', 'near-window', 'tool-takeover', 'cut-off', 'compaction', 'resumed'];

  it.each(SCENARIOS)(
    "%s: session_meta's cwd, at that line, for the conversation of its calls",
    (scenario) => {
      const { path, text } = codexSession(scenario);
      const meta = text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as SessionLine)
        .find((l) => l.type === 'session_meta')!;
      // no repository: the capture ran `codex exec --skip-git-repo-check` outside one
      expect(meta.payload.git).toBeUndefined();
      expect(meta.payload.cwd).toMatch(/^\/tmp\/rotscope-codex-\w+\/work$/);
      const r = normalizeCodexSession(text, CTX, path);
      expect(r.projects).toEqual([
        {
          conversationId: meta.payload.id,
          project: meta.payload.cwd,
          atNs: msToNs(Date.parse(meta.timestamp)),
        },
      ]);
      expect(r.calls.length).toBeGreaterThan(0);
      expect(new Set(r.calls.map((c) => c.conversationId))).toEqual(new Set([meta.payload.id]));
    },
  );

  const meta = (payload: Record<string, unknown>, timestamp = '2026-12-02T06:57:39.033Z') =>
    JSON.stringify({ timestamp, type: 'session_meta', payload });

  it('the git remote before the directory', () => {
    const r = normalizeCodexSession(
      meta({
        id: 'codex-git',
        cwd: '/home/dev/acme/api',
        git: { commit_hash: 'abc', branch: 'main', repository_url: 'git@github.com:acme/api.git' },
      }),
      CTX,
    );
    expect(r.projects).toEqual([
      {
        conversationId: 'codex-git',
        project: 'git@github.com:acme/api.git',
        atNs: msToNs(Date.parse('2026-12-02T06:57:39.033Z')),
      },
    ]);
  });

  it('git without a remote, or a remote that is not a string: the directory', () => {
    const noRemote = normalizeCodexSession(
      meta({ id: 'codex-local', cwd: '/home/dev/local', git: { branch: 'main' } }),
      CTX,
    );
    expect(noRemote.projects?.map((p) => p.project)).toEqual(['/home/dev/local']);
    const odd = normalizeCodexSession(
      meta({ id: 'codex-odd', cwd: '/home/dev/odd', git: { repository_url: 7 } }),
      CTX,
    );
    expect(odd.projects?.map((p) => p.project)).toEqual(['/home/dev/odd']);
  });

  it('neither: no project; no session_meta at all: none either', () => {
    expect(normalizeCodexSession(meta({ id: 'codex-nowhere' }), CTX).projects).toEqual([]);
    const { path, text } = codexSession('healthy');
    const withoutMeta = text
      .split('\n')
      .filter((l) => !l.includes('"type":"session_meta"'))
      .join('\n');
    const r = normalizeCodexSession(withoutMeta, CTX, path);
    expect(r.calls.length).toBeGreaterThan(0);
    expect(r.projects).toEqual([]);
  });
});
