/**
 * Findings, newest first, filtered by detector, severity, time range, model, project and
 * acknowledged or not (the filters live in the route: `#/findings?detector=history_lost&range=24h`;
 * `limit` sets the page size). Pages follow the API's cursor ("Older findings"). Each row links
 * to its run with the finding selected, where it can be acknowledged; an acknowledged one is
 * marked, its note in the mark's tooltip. "Download CSV" is the same list, every page, as CSV;
 * "Mute new findings like these" mutes what the filters name (../findings/Mutes.tsx).
 * `#/findings/<id>` (the link every channel sends) redirects to its run.
 */
import { useMemo } from 'react';
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { GettingStarted } from '../components/GettingStarted.tsx';
import { detectorLabel } from '../findings/detectors.ts';
import { FindingFilters, RANGES, type Filters } from '../findings/FindingFilters.tsx';
import { FindingRedirect } from '../findings/FindingRedirect.tsx';
import { Mutes } from '../findings/Mutes.tsx';
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
    project: route.query.get('project') ?? '',
    acknowledged: route.query.get('acknowledged') ?? '',
  };
  const { detector, severity, range, model, project, acknowledged } = filters;
  const limit = route.query.get('limit') ?? '50';
  // `since` is fixed when the filters change, not at every render (that would refetch forever).
  const path = useMemo(() => {
    const ms = RANGES.find((candidate) => candidate.id === range)?.ms;
    return withQuery('/api/findings', {
      detector,
      severity,
      model,
      project,
      acknowledged,
      since: ms === undefined ? undefined : new Date(Date.now() - ms).toISOString(),
      limit,
    });
  }, [detector, severity, range, model, project, acknowledged, limit]);
  const list = usePaged<Finding>(path);
  const models = useMemo(
    () =>
      [
        ...new Set(list.items.map((finding) => finding.model).filter((m): m is string => !!m)),
      ].sort(),
    [list.items],
  );
  const projects = useMemo(
    () =>
      [
        ...new Set(list.items.map((finding) => finding.project).filter((p): p is string => !!p)),
      ].sort(),
    [list.items],
  );
  const filtered = Object.values(filters).some((value) => value !== '');

  return (
    <section className="findings-page">
      <h1>Findings</h1>
      <FindingFilters
        filters={filters}
        models={models}
        projects={projects}
        onChange={(next) =>
          redirect(['findings'], { ...next, limit: route.query.get('limit') ?? undefined })
        }
      />
      <Mutes filters={{ detector, project, model }} />
      <p className="export">
        <a href={`${path}${path.includes('?') ? '&' : '?'}format=csv`} download="findings.csv">
          Download CSV
        </a>{' '}
        <span className="muted">(every finding these filters match)</span>
      </p>
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
              <th>Project</th>
              <th>Conversation</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((finding) => {
              const target = findingTarget(finding);
              return (
                <tr
                  key={finding.id}
                  data-finding={finding.id}
                  className={finding.acknowledgedAt ? 'acknowledged' : undefined}
                >
                  <td className="nowrap">{formatTime(finding.createdAt)}</td>
                  <td className={severityClass(finding.severity)}>{finding.severity}</td>
                  <td className="nowrap">
                    {detectorLabel(finding.detector)}
                    {finding.kind ? <span className="muted"> · {finding.kind}</span> : null}
                  </td>
                  <td>
                    <a href={href(target.path, target.query)}>{finding.summary}</a>
                    {finding.acknowledgedAt && (
                      <span
                        className="badge acknowledged-mark"
                        title={`Acknowledged ${formatTime(finding.acknowledgedAt)}: ${finding.acknowledgedNote ?? ''}`}
                      >
                        acknowledged
                      </span>
                    )}
                  </td>
                  <td className="nowrap">{finding.model ?? '–'}</td>
                  <td className="finding-project" title={finding.project ?? undefined}>
                    {finding.project ?? '–'}
                  </td>
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
