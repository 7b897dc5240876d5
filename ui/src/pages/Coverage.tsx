/**
 * Coverage: is a quiet detector quiet, or blind? Per detector, the share of calls that carry
 * what it needs and, when it misses calls, what to send so it sees them; per producer, the
 * detectors that see none of its calls.
 */
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { ShareBar } from '../coverage/ShareBar.tsx';
import { sight, type Coverage } from '../coverage/types.ts';
import { DETECTORS, detectorLabel } from '../findings/detectors.ts';
import { formatShare, formatTokens } from '../format.ts';
import type { Route } from '../router.ts';

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
      {data && data.calls === 0 && (
        <Empty>No calls stored yet: every detector is blind until calls arrive.</Empty>
      )}
      {data && data.calls > 0 && (
        <>
          <p>
            {formatTokens(data.calls)} calls in {formatTokens(data.conversations)} conversations,{' '}
            {formatTokens(data.compactions)} compaction{data.compactions === 1 ? '' : 's'} marked.
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
                        <code>{producer.producer}</code>
                        {producer.blind.length > 0 && (
                          <div className="sight-blind">
                            blind: {producer.blind.map(detectorLabel).join(', ')}
                          </div>
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
                            title={state === 'sees' ? undefined : data.detectors[id].hint}
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
        </>
      )}
    </section>
  );
}
