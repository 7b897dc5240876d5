-- The window the agent itself reports, apart from its calls (issue 34 §1): Claude Code's status
-- line (`model.id`, `context_window.context_window_size`) sent by rotscope's hooks, the Agent SDK's
-- `modelUsage[model].contextWindow` sent by @rotscope/sdk. One row per conversation and model,
-- the latest report; the conversation's calls of that model get it (window_source `agent`) unless
-- an override gives theirs, those stored before the report too, which are then judged again
-- (src/store/agent-windows.ts).
CREATE TABLE agent_windows (
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  conversation_id text NOT NULL,
  -- The model id as the agent names it.
  model           text NOT NULL,
  window_tokens   integer NOT NULL,
  -- Who reported it: `claude_code.statusline`, `claude_agent_sdk`, ...
  reporter        text NOT NULL,
  reported_at_ns  bigint NOT NULL,
  PRIMARY KEY (workspace_id, conversation_id, model)
);
