/**
 * The run view (`#/runs/<id>`, `#/conversations/<id>/strip`, optional `?finding=<id>`): the context
 * growth strip of every LLM call, the run's findings beside it, and What was lost at the drop
 * selected (a ▼ on the strip or a finding in the list). The finding selected can be acknowledged
 * with a note there.
 */
import { useMemo, useState } from 'react';
import { useApi } from '../api.ts';
import { Empty, ErrorMessage, Loading } from '../components/Status.tsx';
import { formatTime, severityClass } from '../format.ts';
import { redirect, type Route } from '../router.ts';
import { Acknowledge } from '../findings/Acknowledge.tsx';
import { FindingsList } from '../run/FindingsList.tsx';
import { findingTitle } from '../run/labels.ts';
import { StripChart } from '../run/StripChart.tsx';
import {
  buildModel,
  callsLabel,
  callsOf,
  fullest,
  isSideCall,
  wholePercent,
  windowUnknownModels,
  type StreamFilter,
} from '../run/strip-model.ts';
import type { Strip } from '../run/types.ts';
import { WhatWasLost, type DropPlace } from '../run/WhatWasLost.tsx';
import { plural } from '../../../src/model/plural.ts';

export default function RunPage({ route }: { route: Route }) {
  const [section = 'runs', id = ''] = route.path;
  const kind = section === 'conversations' ? 'conversations' : 'runs';
  const { data, error, loading } = useApi<Strip>(
    id ? `/api/${kind}/${encodeURIComponent(id)}/strip` : undefined,
  );
  const selected = route.query.get('finding');
  const path = kind === 'conversations' ? [kind, id, 'strip'] : [kind, id];
  const select = (findingId: string) => redirect(path, { finding: findingId });

  if (!id) return <Empty>No run given.</Empty>;
  return (
    <div className="run-view">
      <h1>
        {kind === 'conversations' ? 'Conversation' : 'Run'} <code>{id}</code>
      </h1>
      {loading && !data && <Loading what="the strip" />}
      <ErrorMessage error={error} />
      {data && <RunBody strip={data} selected={selected} onSelect={select} />}
    </div>
  );
}

function RunBody({
  strip,
  selected,
  onSelect,
}: {
  strip: Strip;
  selected: string | null;
  onSelect: (findingId: string) => void;
}) {
  const [filter, setFilter] = useState<StreamFilter>('all');
  const model = useMemo(() => buildModel(strip, filter), [strip, filter]);
  const top = fullest(model);
  const windowUnknown = useMemo(() => windowUnknownModels(strip), [strip]);
  const finding = strip.findings.find((f) => f.findingId === selected) ?? null;
  const agents = strip.streams.map((s, k) => ({ ...s, k })).filter((s) => s.agentId !== null);
  const sideCalls = strip.columns.side.some((s) => s >= 0);

  return (
    <>
      <p className="run-meta muted">
        {plural(strip.calls, 'call')}
        {strip.truncated ? ' (the first ones; more exist)' : ''}
        {strip.startedAt !== null ? ` · from ${formatTime(strip.startedAt)}` : ''}
        {strip.models.length > 0 ? ` · ${strip.models.join(', ')}` : ''}
        {` · ${plural(strip.streams.length, 'stream')}`}
        {agents.length > 0 ? ` (${plural(agents.length, 'sub-agent')})` : ''}
        {top ? ` · fullest call #${top.index + 1} at ${wholePercent(top.share)} of its window` : ''}
        {strip.guard.length > 0 && (
          <span className="run-guard">
            {' '}
            · the guard {guardWords(strip.guard)} (◊ on the calls that carried it)
          </span>
        )}
        {windowUnknown.length > 0 && (
          <span
            className="sight-blind window-unknown"
            title="no source knows the window of these models: their calls are not judged for context too full; set a window override on the Context rot alert page"
          >
            {' '}
            · window unknown for {windowUnknown.join(', ')}
          </span>
        )}
      </p>
      {(agents.length > 0 || sideCalls) && (
        <label className="stream-filter">
          Streams{' '}
          <select value={filter} onChange={(event) => setFilter(event.target.value)}>
            <option value="all">all calls</option>
            <option value="main">main thread only</option>
            {agents.map((a) => (
              <option key={a.k} value={`stream:${a.k}`}>
                sub-agent {a.agentId}
              </option>
            ))}
            {sideCalls && <option value="side">side calls</option>}
          </select>
        </label>
      )}
      <div className="run-layout">
        <div className="run-main">
          {strip.calls === 0 ? (
            <Empty>No LLM calls stored for this {strip.scope}.</Empty>
          ) : (
            <StripChart strip={strip} model={model} selected={selected} onSelect={onSelect} />
          )}
          {finding?.detector === 'history_lost' ? (
            <WhatWasLost
              // siblings of Acknowledge below, keyed by the same finding: each in its own namespace
              key={`lost-${finding.findingId}`}
              findingId={finding.findingId}
              place={{ ...placeOf(strip, finding.index), inRun: strip.scope === 'run' }}
            />
          ) : finding ? (
            <section className="selected-finding" aria-label="Selected finding">
              <h2>
                {findingTitle(finding)}
                {finding.index !== null ? ` · ${callsLabel(callsOf(finding))}` : ''}{' '}
                <span className={`badge ${severityClass(finding.severity)}`}>
                  {finding.severity}
                </span>
              </h2>
              <p>{finding.summary}</p>
            </section>
          ) : (
            <p className="muted hint">
              Click a ▼ on the strip to see what was lost at that drop, or a mark to read its
              finding.
            </p>
          )}
          {finding && (
            <Acknowledge key={`ack-${finding.findingId}`} findingId={finding.findingId} />
          )}
        </div>
        <aside className="run-aside">
          <h2>Findings</h2>
          <FindingsList findings={strip.findings} selected={selected} onSelect={onSelect} />
        </aside>
      </div>
    </>
  );
}

/** "narrowed 2 Reads, warned about 1 result". */
function guardWords(acts: Strip['guard']): string {
  const narrowed = acts.filter((a) => a.action === 'narrowed').length;
  const warned = acts.length - narrowed;
  return [
    narrowed > 0 ? `narrowed ${narrowed} read${narrowed === 1 ? '' : 's'}` : '',
    warned > 0 ? `warned about ${warned} result${warned === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** The strip numbers of the call after a drop and of its stream's previous call. */
function placeOf(strip: Strip, index: number | null): DropPlace {
  if (index === null) return { beforeCall: null, afterCall: null };
  const stream = strip.columns.stream[index];
  for (let i = index - 1; i >= 0; i--) {
    if (
      strip.columns.stream[i] === stream &&
      !isSideCall(strip, i) &&
      strip.columns.context[i] !== null
    )
      return { beforeCall: i + 1, afterCall: index + 1 };
  }
  return { beforeCall: null, afterCall: index + 1 };
}
