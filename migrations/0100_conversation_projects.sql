-- Where a conversation runs (issue 23 §5): its working directory or repository when the producer
-- says (src/ingest/projects.ts: `process.working_directory` / `vcs.repository.url.full` on spans,
-- which rotscope's Claude Code hook sets; a transcript line's `cwd`; a Codex session's `cwd` or
-- git remote). The latest report wins: `project_at_ns` is when it was made. Both null until a
-- producer reports one. The console lists conversations with it.
ALTER TABLE conversations ADD COLUMN project text;
ALTER TABLE conversations ADD COLUMN project_at_ns bigint;
