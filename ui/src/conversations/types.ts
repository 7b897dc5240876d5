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
  streams: number;
  findings: number;
  streamList: StreamSummary[];
  sideCalls: number;
  runCount: number;
  runs: RunSummary[];
}
