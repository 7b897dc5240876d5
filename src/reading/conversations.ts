/**
 * Conversations as the API lists and shows them (GET /api/conversations and
 * /api/conversations/:id): the store's rows (src/store/browse.ts) with the rules of reading
 * them applied: a model an override window covers now is not "window unknown" (the evaluator
 * applies overrides as it reads), and a conversation the evaluator has no state of yet is
 * pending.
 */
import { overrideWindow } from '../ingest/windows.ts';
import { nsToIso } from '../model/telemetry.ts';
import { getAlertSettings } from '../store/alerts.ts';
import {
  conversationCost,
  getConversation,
  listConversations,
  type ConversationKey,
} from '../store/browse.ts';
import { evaluationStatus, projectsOf } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import { guardSummary } from '../store/guard-decisions.ts';

/**
 * Reads pages of the workspace's conversations (`search` applied), each conversation's
 * `windowUnknown` keeping only the models no window override covers now (the overrides are
 * read once, for every page).
 */
export async function conversationPages(db: Db, workspaceId: string, search: string | undefined) {
  const { windowOverrides } = await getAlertSettings(db, workspaceId);
  const unknown = (model: string) => overrideWindow(model, windowOverrides) === null;
  return async (limit: number, at: ConversationKey | undefined) => {
    const found = await listConversations(db, workspaceId, { limit, after: at, search });
    return {
      ...found,
      items: found.items.map((c) => ({ ...c, windowUnknown: c.windowUnknown.filter(unknown) })),
    };
  };
}

/**
 * One conversation with its guard summary, cost, project and evaluation status (pending until
 * the evaluator has judged it); undefined when it has no calls.
 */
export async function conversationDetail(db: Db, workspaceId: string, id: string) {
  const found = await getConversation(db, workspaceId, id);
  if (!found) return undefined;
  const guard = await guardSummary(db, workspaceId, id);
  const projects = await projectsOf(db, workspaceId, [id]);
  const status = await evaluationStatus(db, workspaceId, id);
  const costUsd = await conversationCost(db, workspaceId, id);
  return {
    id,
    ...found,
    guard,
    costUsd,
    project: projects.get(id) ?? null,
    evaluation: {
      pending: status?.pending ?? true,
      judgedThrough: nsToIso(status?.judgedNs ?? null),
      error: status?.error ?? null,
    },
  };
}
