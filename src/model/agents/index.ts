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
import type { Attributes, Span } from '../telemetry.ts';
import type { AgentProfile, AgentRecognition, AgentSessionFiles } from './types.ts';

export type {
  AgentProfile,
  AgentRecognition,
  AgentSessionFiles,
  AgentTelemetry,
  CoverageDetector,
} from './types.ts';

export const AGENT_PROFILES = [
  claudeCode,
  codex,
  geminiCli,
  copilotCli,
  openCode,
  qwenCode,
] as const;

/** The compaction evidence ids the agents' readers give, from their profiles' `compactionEvidence`. */
export type AgentCompactionEvidence = (typeof AGENT_PROFILES)[number] extends infer P
  ? P extends { compactionEvidence: infer E }
    ? keyof E & string
    : never
  : never;

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

/** True when a resource is the agent's by its `service.name` (`recognize.serviceNames`, `…Prefixes`). */
export function recognizesResource(r: AgentRecognition, resource: Attributes): boolean {
  const service = resource['service.name'];
  if (typeof service !== 'string') return false;
  if (r.serviceNames?.includes(service)) return true;
  return r.serviceNamePrefixes?.some((p) => service.startsWith(p)) === true;
}

/** True when a span (or log record: no name) is of the agent's own telemetry (./types.ts `AgentRecognition`). */
export function recognizes(
  r: AgentRecognition,
  span: { name?: string; scope: { name: string }; resource: Attributes },
): boolean {
  if (r.scopeNames?.includes(span.scope.name)) return true;
  if (recognizesResource(r, span.resource)) return true;
  const name = span.name;
  return name !== undefined && r.spanNamePrefixes?.some((p) => name.startsWith(p)) === true;
}

/** The agent whose own telemetry a span is, by the profiles' `recognize`, in their order; else undefined. */
export function agentOfSpan(
  span: Pick<Span, 'name' | 'scope' | 'resource'>,
): AgentProfile | undefined {
  for (const p of AGENT_PROFILES) if (recognizes(p.recognize, span)) return p;
  return undefined;
}
