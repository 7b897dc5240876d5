/**
 * Findings, newest first, filtered by detector, severity, time range and model (the filters
 * live in the route: `#/findings?detector=history_lost&range=24h`; `limit` sets the page size).
 * Pages follow the API's cursor ("Older findings"). Each row links to its run
 * with the finding selected. `#/findings/<id>` (the link every channel sends) redirects there.
 */
import { useMemo } from 'react';
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { GettingStarted } from '../components/GettingStarted.tsx';
import { detectorLabel } from '../findings/detectors.ts';
import { FindingFilters, RANGES, type Filters } from '../findings/FindingFilters.tsx';
import { FindingRedirect } from '../findings/FindingRedirect.tsx';
import { usePaged, withQuery } from '../paging.ts';
import { findingTarget, type Finding } from '../findings/types.ts';
import { formatTime, severityClass } from '../format.ts';
import { href, redirect, type Route } from '../router.ts';
import { LoadMore } from '../components/LoadMore.tsx';

export default function FindingsPage({ route }: { route: Route }) {
  const id = route.path[1];
  if (id !== undefined) return <FindingRedirect id={id} />;
  return <FindingsList route={route} />;
}

function FindingsList({ route }: { route: Route }) {
  const filters: Filters = {
    detector: route.query.get('detector') ?? '',
    severity: route.query.get('severity') ?? '',
    range: route.query.get('range') ?? '',
    model: route.query.get('model') ?? '',
  };
  const { detector, severity, range, model } = filters;
  const limit = route.query.get('limit') ?? '50';
  // `since` is fixed when the filters change, not at every render (that would refetch forever).
  const path = useMemo(() => {
    const ms = RANGES.find((candidate) => candidate.id === range)?.ms;
    return withQuery('/api/findings', {
      detector,
      severity,
      model,
      since: ms === undefined ? undefined : new Date(Date.now() - ms).toISOString(),
      limit,
    });
  }, [detector, severity, range, model, limit]);
  const list = usePaged<Finding>(path);
  const models = useMemo(
    () =>
      [
        ...new Set(list.items.map((finding) => finding.model).filter((m): m is string => !!m)),
      ].sort(),
    [list.items],
  );
  const filtered = detector !== '' || severity !== '' || range !== '' || model !== '';

  return (
    <section className="findings-page">
      <h1>Findings</h1>
      <FindingFilters
        filters={filters}
        models={models}
        onChange={(next) =>
          redirect(['findings'], { ...next, limit: route.query.get('limit') ?? undefined })
        }
      />
      <ErrorMessage error={list.error} />
      {list.items.length === 0 && list.loading && <Loading what="findings" />}
      {list.items.length === 0 && !list.loading && !list.error && (
        <>
          <Empty>
            {filtered
              ? 'No finding matches these filters.'
              : 'No findings yet: the detectors have not found context rot in the calls stored so far. The Coverage page says whether they can see what they need.'}
          </Empty>
          {!filtered && <NothingSentYet />}
        </>
      )}
      {list.items.length > 0 && (
        <table className="findings">
          <thead>
            <tr>
              <th>Time</th>
              <th>Severity</th>
              <th>Detector</th>
              <th>What happened</th>
              <th>Model</th>
              <th>Conversation</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((finding) => {
              const target = findingTarget(finding);
              return (
                <tr key={finding.id} data-finding={finding.id}>
                  <td className="nowrap">{formatTime(finding.createdAt)}</td>
                  <td className={severityClass(finding.severity)}>{finding.severity}</td>
                  <td className="nowrap">
                    {detectorLabel(finding.detector)}
                    {finding.kind ? <span className="muted"> · {finding.kind}</span> : null}
                  </td>
                  <td>
                    <a href={href(target.path, target.query)}>{finding.summary}</a>
                  </td>
                  <td className="nowrap">{finding.model ?? '–'}</td>
                  <td>
                    <a
                      className="id"
                      href={href(['conversations', finding.conversationId], {
                        finding: finding.id,
                      })}
                    >
                      {finding.conversationId}
                    </a>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <LoadMore list={list} label="Older findings" />
    </section>
  );
}

/** The install steps, when no call at all is stored (findings may be few; calls should not be). */
function NothingSentYet() {
  const calls = useApi<{ items: unknown[] }>('/api/conversations?limit=1');
  return calls.data?.items.length === 0 ? <GettingStarted /> : null;
}
