/**
 * What to do when nothing has arrived yet, on the empty Findings and Conversations pages: the
 * install command that points an agent's telemetry here (`rotscope claude-code install`, with
 * `--url` when the console is not at the default address and `--token` once tokens exist), the
 * import of past sessions, and the OTLP endpoint for any other exporter. A newcomer's first
 * look at the console is an empty page; it should say the next step, not only that it is empty.
 */
import { useSession } from '../session.tsx';

/** The address install writes by default (`rotscope claude-code install` without `--url`). */
const DEFAULT_URL = 'http://127.0.0.1:4318';

export function GettingStarted() {
  const { session } = useSession();
  const origin = window.location.origin;
  const url = origin === DEFAULT_URL ? '' : ` --url ${origin}`;
  // Once a token exists the server is no longer open: the exporter needs an ingest token.
  const token = session && !session.open ? ' --token <an ingest token>' : '';
  return (
    <div className="getting-started" aria-label="Getting started">
      <p>Nothing has been sent here yet. To watch Claude Code sessions, run in a terminal:</p>
      <pre>
        <code>rotscope claude-code install{url + token}</code>
      </pre>
      <p className="muted">
        then start a new Claude Code session: its calls appear here as it works. Past sessions:{' '}
        <code>rotscope import ~/.claude/projects</code>. Other agents have their own install (
        <code>rotscope codex install</code>, <code>gemini</code>, <code>copilot</code>,{' '}
        <code>opencode</code>, <code>qwen</code>); any OpenTelemetry exporter can send to{' '}
        <code>{origin}/v1/traces</code>.{token && ' Create the ingest token on the Tokens page.'}
      </p>
    </div>
  );
}
