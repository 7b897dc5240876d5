/**
 * Where a conversation runs (its project): the working directory or the repository, when the
 * producer says. Telemetry carries it as resource or span attributes of the OpenTelemetry
 * semantic conventions (`vcs.repository.url.full`, `process.working_directory`: rotscope's
 * Claude Code hook sets the latter on the spans it sends); session files carry it per line
 * (a Claude Code transcript's `cwd`, a Codex session's `session_meta.cwd` and git remote).
 */
import type { ConversationProject } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { str } from './attrs.ts';

/**
 * The span rotscope's Claude Code hook sends when a session starts (`session.id`, and the
 * working directory on its resource): it carries nothing but where the session runs.
 */
export const SESSION_SPAN_NAME = 'rotscope.session';

/** The repository before the directory: it names the project wherever it is checked out. */
const PROJECT_KEYS = ['vcs.repository.url.full', 'process.working_directory'] as const;

/** Longer values are cut: a project is a label, not a payload. */
const MAX_PROJECT_CHARS = 512;

/** The project named by these attributes (a span's own before its resource's), or null. */
export function projectOf(...attributeSets: readonly Attributes[]): string | null {
  for (const key of PROJECT_KEYS) {
    for (const attrs of attributeSets) {
      const value = str(attrs, key);
      if (value !== null) return value.slice(0, MAX_PROJECT_CHARS);
    }
  }
  return null;
}

/** A project report, or nothing when the project is unknown. */
export function projectReport(
  conversationId: string,
  project: string | null | undefined,
  atNs: string,
): ConversationProject[] {
  if (project === null || project === undefined || project === '') return [];
  return [{ conversationId, project: project.slice(0, MAX_PROJECT_CHARS), atNs }];
}
