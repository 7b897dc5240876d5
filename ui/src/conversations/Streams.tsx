/** A conversation's streams: the main thread, each sub-agent, and the side calls beside them. */
import type { ConversationSummary } from './types.ts';
import { plural } from '../../../src/model/plural.ts';

export function Streams({ conversation }: { conversation: ConversationSummary }) {
  const subAgents = conversation.streamList.filter((stream) => stream.kind === 'sub-agent');
  return (
    <span className="streams">
      {subAgents.length > 0 && (
        <span
          className="tag sub-agent"
          title={subAgents
            .map((s) => `${s.agentId ?? s.key}: ${plural(s.calls, 'call')}`)
            .join('\n')}
        >
          {plural(subAgents.length, 'sub-agent')}
        </span>
      )}
      {conversation.sideCalls > 0 && (
        <span className="tag side" title="calls beside the main loop: compaction, titles, …">
          {plural(conversation.sideCalls, 'side call')}
        </span>
      )}
      {subAgents.length === 0 && conversation.sideCalls === 0 && (
        <span className="muted">main only</span>
      )}
    </span>
  );
}
