/**
 * Coverage: is a quiet detector quiet, or blind? Per detector, the share of calls that carry
 * what it needs and, when it misses calls, what to send so it sees them; per producer, the
 * detectors that see none of its calls; per model, the window its calls are judged on and where
 * it came from (a model without one is not judged); the Claude Code versions the calls came
 * from, with a warning for one rotscope has not verified. First of all, the requests refused
 * for their token lately: an exporter that sends no token (or a wrong one) loses every batch,
 * and this is where its user sees it.
 */
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { ShareBar } from '../coverage/ShareBar.tsx';
import {
  sight,
  VERSION_STATUS_LABEL,
  WINDOW_SOURCE_LABEL,
  type Coverage,
  type Refusals,
} from '../coverage/types.ts';
import { DETECTORS, detectorLabel } from '../findings/detectors.ts';
import { formatAge, formatShare, formatTime, formatTokens } from '../format.ts';
import { href, type Route } from '../router.ts';
import { plural, pluralWord } from '../../../src/model/plural.ts';

const SIGHT_LABEL = { blind: 'blind', partial: 'partly blind', sees: 'sees every call' };

export default function CoveragePage(_props: { route: Route }) {
  const { data, error, loading } = useApi<Coverage>('/api/coverage');
  return (
    <section className="coverage-page">
      <h1>Coverage</h1>
      <p className="muted">
        A detector that finds nothing is either quiet (nothing went wrong) or blind (the calls do
        not carry what it needs). This page tells them apart.
      </p>
      <ErrorMessage error={error} />
      {loading && !data && <Loading what="coverage" />}
      {data && <RefusedRequests refusals={data.refusals} />}
      {data && data.calls === 0 && (
        <Empty>No calls stored yet: every detector is blind until calls arrive.</Empty>
      )}
      {data && data.calls > 0 && (
        <>
          <p>
            {plural(data.calls, 'call', 'calls', formatTokens)} in{' '}
            {plural(data.conversations, 'conversation', 'conversations', formatTokens)},{' '}
            {plural(data.compactions, 'compaction', 'compactions', formatTokens)} marked.
          </p>
          <table className="coverage">
            <thead>
              <tr>
                <th>Detector</th>
                <th>Calls it can use</th>
                <th>Needs</th>
                <th>To make it see</th>
              </tr>
            </thead>
            <tbody>
              {DETECTORS.map(({ id, label }) => {
                const detector = data.detectors[id];
                const state = sight(detector.covered, data.calls);
                return (
                  <tr key={id} data-detector={id}>
                    <td>
                      <strong>{label}</strong>
                      <div className={`sight sight-${state}`}>{SIGHT_LABEL[state]}</div>
                    </td>
                    <td>
                      <ShareBar share={detector.share} state={state} />
                      <div className="muted">
                        {formatTokens(detector.covered)} of {formatTokens(data.calls)}
                      </div>
                    </td>
                    <td>{detector.needs}</td>
                    <td className="hint">
                      {state === 'sees' ? <span className="muted">nothing</span> : detector.hint}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {data.producers.length > 0 && (
            <>
              <h2>By producer</h2>
              <table className="coverage-producers">
                <thead>
                  <tr>
                    <th>Producer</th>
                    <th>Calls</th>
                    {DETECTORS.map(({ id, label }) => (
                      <th key={id}>{label}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.producers.map((producer) => (
                    <tr key={producer.producer} data-producer={producer.producer}>
                      <td>
                        {producer.agent && <strong>{producer.agent} </strong>}
                        <code>{producer.producer}</code>
                        {producer.blind.length > 0 && (
                          <div className="sight-blind">
                            blind: {producer.blind.map(detectorLabel).join(', ')}
                          </div>
                        )}
                        {DETECTORS.filter(({ id }) => producer.hints[id]).map(({ id, label }) => (
                          <p key={id} className="hint producer-hint" data-hint={id}>
                            {label}: {producer.hints[id]}
                          </p>
                        ))}
                        {DETECTORS.filter(({ id }) => producer.limits?.[id]).map(
                          ({ id, label }) => (
                            <p key={`limit-${id}`} className="hint producer-limit" data-limit={id}>
                              {label}, what {producer.agent ?? 'it'} cannot send:{' '}
                              {producer.limits?.[id]}
                            </p>
                          ),
                        )}
                      </td>
                      <td>{formatTokens(producer.calls)}</td>
                      {DETECTORS.map(({ id }) => {
                        const covered = producer.covered[id];
                        const state = sight(covered, producer.calls);
                        return (
                          <td
                            key={id}
                            className={`sight-${state}`}
                            title={
                              state === 'sees'
                                ? undefined
                                : (producer.hints[id] ?? data.detectors[id].hint)
                            }
                          >
                            {formatShare(producer.calls === 0 ? 0 : covered / producer.calls)}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <ModelWindows coverage={data} />
          <ClaudeCodeVersions coverage={data} />
        </>
      )}
    </section>
  );
}

/** Each model of the recent calls: the window its calls are judged on, and where it came from. */
function ModelWindows({ coverage }: { coverage: Coverage }) {
  if (coverage.models.length === 0) return null;
  const missing = coverage.modelsWithoutWindow;
  return (
    <>
      <h2>Windows by model</h2>
      <p className="muted">
        The window each model's calls since {formatTime(coverage.recentSince)} are judged on, and
        where it came from. A model without a window is not judged by Context too full.
      </p>
      {missing.length > 0 && (
        <p className="sight-blind models-without-window">
          No window known for {missing.join(', ')}: add a window override on the{' '}
          <a href={href(['alert'])}>Context rot alert</a> page.
        </p>
      )}
      <table className="coverage-models">
        <thead>
          <tr>
            <th>Model</th>
            <th>Window</th>
            <th>Source</th>
            <th>Calls</th>
          </tr>
        </thead>
        <tbody>
          {coverage.models.map((m) => (
            <tr
              key={`${m.model ?? ''}|${m.window ?? ''}|${m.windowSource ?? ''}`}
              data-model={m.model ?? ''}
              className={m.window === null ? 'sight-blind' : undefined}
            >
              <td>
                <code>{m.model ?? '(no model)'}</code>
              </td>
              <td>{m.window === null ? 'unknown' : formatTokens(m.window)}</td>
              <td>
                {m.windowSource === null
                  ? 'no rule knows the model: not judged'
                  : (WINDOW_SOURCE_LABEL[m.windowSource] ?? m.windowSource)}
              </td>
              <td>{formatTokens(m.calls)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The Claude Code versions of the recent calls, against the versions rotscope verified. */
function ClaudeCodeVersions({ coverage }: { coverage: Coverage }) {
  const cc = coverage.claudeCode;
  if (cc.versions.length === 0) return null;
  return (
    <>
      <h2>Claude Code versions</h2>
      <p className="muted">
        Verified: {cc.verified.join(', ')} (supported from {cc.oldestSupported}, newest verified{' '}
        {cc.newestVerified}).
      </p>
      {cc.warning !== null && (
        <p className="sight-partial claude-code-warning" role="alert">
          {cc.warning}
        </p>
      )}
      <table className="coverage-versions">
        <thead>
          <tr>
            <th>Version</th>
            <th>Status</th>
            <th>Calls</th>
            <th>Conversations</th>
          </tr>
        </thead>
        <tbody>
          {cc.versions.map((v) => (
            <tr key={v.version} data-version={v.version}>
              <td>
                <code>{v.version}</code>
              </td>
              <td
                className={
                  v.status === 'newer' || v.status === 'older'
                    ? 'sight-partial'
                    : v.status === 'verified'
                      ? 'sight sight-sees'
                      : undefined
                }
              >
                {VERSION_STATUS_LABEL[v.status]}
              </td>
              <td>{formatTokens(v.calls)}</td>
              <td>{formatTokens(v.conversations)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/**
 * The requests refused for their token in the last days, each with what to do. Refusals of no
 * workspace (no token, an unknown one) are listed for an admin session, counted for others.
 *
 * A refusal followed by accepted data (`settled`: the workspace stored new data after it was
 * last seen) is history, not a lockout going on: it is shown calm, with its age, rather than as a
 * red alarm for the seven days it is kept; a newer refusal raises the alarm again. Not a dismiss
 * button: nothing to remember per browser, and nothing hides a lockout that comes back.
 */
function RefusedRequests({ refusals }: { refusals: Refusals }) {
  const { items, withoutWorkspace } = refusals;
  if (items.length === 0 && withoutWorkspace === null) return null;
  const open = items.filter((r) => !r.settled);
  const openWithout = withoutWorkspace !== null && !withoutWorkspace.settled;
  const total = open.reduce((n, r) => n + r.count, 0) + (openWithout ? withoutWorkspace.count : 0);
  const lastSeen = [...items.map((r) => r.lastSeen), withoutWorkspace?.lastSeen ?? '']
    .filter((at) => at !== '')
    .sort()
    .at(-1);
  return (
    <section className="refusals" aria-labelledby="refusals-title">
      <h2 id="refusals-title">Refused requests</h2>
      {total > 0 ? (
        <p className="sight-blind" role="alert">
          {plural(total, 'request', 'requests', formatTokens)} {pluralWord(total, 'was', 'were')}{' '}
          refused for their token since {formatTime(refusals.since)}
          {refusals.acceptedAt === null ? '' : ' with nothing accepted after them'}: what they
          carried was not stored. An exporter that sends no token, or a wrong one, is locked out
          until it sends an ingest token.
        </p>
      ) : (
        <p className="refusals-settled muted" role="status">
          Settled: the last refusal was {formatAge(lastSeen)} ({formatTime(lastSeen)}), and new data
          has been accepted since (last at {formatTime(refusals.acceptedAt)}), so whatever was
          refused likely sends a working token now. Refusals stay listed for 7 days; a new one shows
          here as an alert.
        </p>
      )}
      {items.length > 0 && (
        <table className="coverage-refusals">
          <thead>
            <tr>
              <th>Refused</th>
              <th>Route</th>
              <th>Sender</th>
              <th>Workspace</th>
              <th>Requests</th>
              <th>Last seen</th>
              <th>To get through</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr
                key={`${r.workspace ?? ''}|${r.status}|${r.route}|${r.reason}|${r.agent}`}
                data-refusal={r.reason}
                data-route={r.route}
                data-settled={r.settled}
                className={r.settled ? 'muted' : undefined}
              >
                <td>
                  <strong>{r.status}</strong> {r.reasonText}
                </td>
                <td>
                  <code>{r.route}</code>
                </td>
                <td>
                  <code>{r.agent}</code>
                </td>
                <td>{r.workspace ?? <span className="muted">none (no valid token)</span>}</td>
                <td>{formatTokens(r.count)}</td>
                <td title={`first seen ${formatTime(r.firstSeen)}`}>
                  {formatTime(r.lastSeen)} <span className="age">({formatAge(r.lastSeen)})</span>
                  {r.settled && <div className="settled">data accepted since</div>}
                </td>
                <td className="hint">{r.hint}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {withoutWorkspace !== null && (
        <p className="refusals-without-workspace">
          {plural(withoutWorkspace.count, 'request', 'requests', formatTokens)} without a valid
          token (no workspace), last at {formatTime(withoutWorkspace.lastSeen)}. If your exporter
          sends no token, create an ingest token and set{' '}
          <code>OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer &lt;token&gt;</code>; sign in with
          an admin token to see which routes and senders were refused.
        </p>
      )}
    </section>
  );
}
