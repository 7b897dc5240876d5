/** A conversation as `GET /api/conversations` lists it. */
export interface StreamSummary {
  key: string;
  kind: 'main' | 'sub-agent';
  agentId: string | null;
  calls: number;
  sideCalls: number;
}

export interface RunSummary {
  id: string;
  calls: number;
  firstCallAt: string | null;
}

export interface ConversationSummary {
  id: string;
  calls: number;
  firstCallAt: string | null;
  lastCallAt: string | null;
  maxContextTokens: number | null;
  fullestShare: number | null;
  models: string[];
  /** The coding agent that ran it, with its version ("Claude Code 2.1.332"); null for an SDK. */
  agent: string | null;
  /** Where it ran: the working directory or repository the producer sent; null when unknown. */
  project: string | null;
  producers: string[];
  /** What Claude Code's tool-result guard did in it; null when nothing. */
  guard: {
    narrowed: number;
    warned: number;
    keptOutTokens: number;
    tools: Array<{ tool: string; narrowed: number; warned: number; keptOutTokens: number }>;
  } | null;
  streams: number;
  findings: number;
  streamList: StreamSummary[];
  sideCalls: number;
  runCount: number;
  runs: RunSummary[];
}
