/** A conversation's streams: the main thread, each sub-agent, and the side calls beside them. */
import type { ConversationSummary } from './types.ts';

export function Streams({ conversation }: { conversation: ConversationSummary }) {
  const subAgents = conversation.streamList.filter((stream) => stream.kind === 'sub-agent');
  return (
    <span className="streams">
      {subAgents.length > 0 && (
        <span
          className="tag sub-agent"
          title={subAgents.map((s) => `${s.agentId ?? s.key}: ${s.calls} calls`).join('\n')}
        >
          {subAgents.length} sub-agent{subAgents.length === 1 ? '' : 's'}
        </span>
      )}
      {conversation.sideCalls > 0 && (
        <span className="tag side" title="calls beside the main loop: compaction, titles, …">
          {conversation.sideCalls} side call{conversation.sideCalls === 1 ? '' : 's'}
        </span>
      )}
      {subAgents.length === 0 && conversation.sideCalls === 0 && (
        <span className="muted">main only</span>
      )}
    </span>
  );
}
