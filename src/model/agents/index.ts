/**
 * The agents rotscope reads, one declared profile each (./types.ts). A new agent is a file here
 * and a line in this list, its readers in src/ingest/, its installer and its tests.
 */
import { claudeCode } from './claude-code.ts';
import { codex } from './codex.ts';
import { copilotCli } from './copilot-cli.ts';
import { geminiCli } from './gemini-cli.ts';
import { openCode } from './opencode.ts';
import { qwenCode } from './qwen-code.ts';
import type { AgentProfile, AgentSessionFiles } from './types.ts';

export type { AgentProfile, AgentSessionFiles, CoverageDetector } from './types.ts';

export const AGENT_PROFILES = [
  claudeCode,
  codex,
  geminiCli,
  copilotCli,
  openCode,
  qwenCode,
] as const;

/** An agent's id. */
export type Agent = (typeof AGENT_PROFILES)[number]['id'];

const BY_ID = new Map<string, AgentProfile>(AGENT_PROFILES.map((p) => [p.id, p]));
const BY_PRODUCER = new Map<string, AgentProfile>(
  AGENT_PROFILES.flatMap((p) => p.producers.map((producer) => [producer, p] as const)),
);

/** The profile of an agent by its id. */
export function agentProfile(agent: Agent): AgentProfile {
  return BY_ID.get(agent)!;
}

/** The profile of the agent behind a producer id; undefined for a library or SDK producer. */
export function profileOfProducer(producer: string | null | undefined): AgentProfile | undefined {
  return producer ? BY_PRODUCER.get(producer) : undefined;
}

/** Every agent's session files, in the order of the list. */
export const SESSION_FILES: readonly AgentSessionFiles[] = AGENT_PROFILES.flatMap((p) =>
  'sessionFiles' in p ? [p.sessionFiles as AgentSessionFiles] : [],
);

/** The producers whose evidence arrives in two signals apart (they settle longer). */
export const SPLIT_EVIDENCE_PRODUCERS: ReadonlySet<string> = new Set(
  AGENT_PROFILES.flatMap((p): readonly string[] => ('splitEvidence' in p ? p.splitEvidence : [])),
);
