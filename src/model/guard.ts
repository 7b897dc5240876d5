/**
 * One decision of Claude Code's tool-result guard (src/cli/guard.ts), as the server stores it
 * (read from its `rotscope.guard` span by src/ingest/guard-spans.ts; src/store/guard-decisions.ts).
 */
export interface GuardDecision {
  workspaceId: string;
  /** The Claude Code session (`session.id`): the conversation. */
  conversationId: string;
  spanId: string;
  atNs: string;
  action: 'narrowed' | 'warned';
  tool: string;
  resultTokens: number;
  budgetTokens: number;
  keptOutTokens: number;
}
