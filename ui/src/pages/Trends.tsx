/**
 * `#/trends?by=model&bucket=day&days=30`: findings per 100 conversations over time, one small
 * chart per detector with a line per key (model, agent, agent version or project), and the
 * figures beside them (conversations, calls, findings, reported cost, tokens sent over the usage
 * threshold). Below, before/after (`&at=<date>|guard&sideDays=<days>`): each rate in the days before
 * a moment against the days from it, with its counts, and the server's verdict on whether there
 * are enough conversations to tell. Hand-written SVG: a few polylines need no chart library.
 */
import { useEffect, useState } from 'react';
import { useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { DETECTORS } from '../findings/detectors.ts';
import { formatCost, formatRate, formatTokens } from '../format.ts';
import { redirect, type Route } from '../router.ts';
import { withQuery } from '../paging.ts';
import { bucketOf } from '../../../src/model/trends.ts';
import type { BeforeAfter, Side, TrendItem, Trends } from '../trends/types.ts';

const KEYS = [
  { id: 'model', label: 'Model' },
  { id: 'agent', label: 'Agent' },
  { id: 'agentVersion', label: 'Agent version' },
  { id: 'project', label: 'Project' },
] as const;

/** Line colours, one per key in order of appearance (cycled past eight). */
const COLOURS = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#d97706',
  '#7c3aed',
  '#0891b2',
  '#db2777',
  '#4b5563',
];

const rateOf = (findings: number, conversations: number) =>
  conversations === 0 ? null : (100 * findings) / conversations;

const keyLabel = (key: string | null, by: string) =>
  key ??
  (by === 'project' ? '(no project reported)' : by === 'model' ? '(no model)' : '(library or SDK)');

/** Every bucket of the range, oldest first, so days without conversations show as gaps. */
function bucketsOf(from: string, to: string, bucket: 'day' | 'week'): string[] {
  const out: string[] = [];
  const end = Date.parse(to);
  for (let ms = Date.parse(from); ms <= end; ms += 86_400_000) {
    const b = bucketOf(ms, bucket);
    if (out.at(-1) !== b) out.push(b);
  }
  return out;
}

export default function TrendsPage({ route }: { route: Route }) {
  const by = route.query.get('by') ?? 'model';
  const bucket = route.query.get('bucket') === 'week' ? 'week' : 'day';
  const days = route.query.get('days') ?? '30';
  const at = route.query.get('at') ?? '';
  const sideDays = route.query.get('sideDays') ?? '14';
  const params = { by, bucket, days, at: at || undefined, sideDays };
  const trends = useApi<Trends>(withQuery('/api/trends', { by, bucket, days }));
  const [draftDays, setDraftDays] = useState(days);
  useEffect(() => setDraftDays(days), [days]);

  return (
    <section className="trends-page">
      <h1>Trends</h1>
      <form
        className="filters"
        onSubmit={(event) => {
          event.preventDefault();
          redirect(['trends'], { ...params, days: draftDays });
        }}
      >
        <label>
          Split by
          <select
            aria-label="Split by"
            value={by}
            onChange={(event) => redirect(['trends'], { ...params, by: event.target.value })}
          >
            {KEYS.map((k) => (
              <option key={k.id} value={k.id}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Per
          <select
            aria-label="Bucket"
            value={bucket}
            onChange={(event) => redirect(['trends'], { ...params, bucket: event.target.value })}
          >
            <option value="day">day</option>
            <option value="week">week</option>
          </select>
        </label>
        <label>
          Days back
          <input
            aria-label="Days back"
            type="number"
            min={1}
            max={366}
            value={draftDays}
            onChange={(event) => setDraftDays(event.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          Show
        </button>
      </form>
      <p className="muted">
        Each conversation counts, with all its calls, cost and findings, on the day of its first
        call. Cost is what the producer reported (Claude Code does; – when none did); tokens over
        threshold are the context tokens sent in calls at or above the usage threshold
        {trends.data ? ` (${Math.round(trends.data.usageThreshold * 100)}% of the window)` : ''}.
      </p>
      <ErrorMessage error={trends.error} />
      {trends.loading && !trends.data && <Loading what="trends" />}
      {trends.data && trends.data.items.length === 0 && (
        <Empty>No conversation began in the last {days} days.</Empty>
      )}
      {trends.data && trends.data.items.length > 0 && (
        <TrendView trends={trends.data} by={by} bucket={bucket} />
      )}
      <BeforeAfterView at={at} sideDays={sideDays} params={params} />
    </section>
  );
}

function TrendView({ trends, by, bucket }: { trends: Trends; by: string; bucket: 'day' | 'week' }) {
  const buckets = bucketsOf(trends.from, trends.to, bucket);
  const keys = [...new Set(trends.items.map((i) => i.key))];
  const colour = (key: string | null) => COLOURS[keys.indexOf(key) % COLOURS.length]!;
  return (
    <>
      <ul className="legend">
        {keys.map((key) => (
          <li key={String(key)}>
            <span className="swatch" style={{ background: colour(key) }} /> {keyLabel(key, by)}
          </li>
        ))}
      </ul>
      <div className="trend-charts">
        {DETECTORS.map((d) => (
          <RateChart
            key={d.id}
            title={d.label}
            detector={d.id}
            buckets={buckets}
            items={trends.items}
            keys={keys}
            colour={colour}
          />
        ))}
      </div>
      <h2>Figures</h2>
      <table className="trend-table">
        <thead>
          <tr>
            <th>{bucket === 'day' ? 'Day' : 'Week of'}</th>
            <th>{KEYS.find((k) => k.id === by)?.label ?? by}</th>
            <th>Conversations</th>
            <th>Calls</th>
            {DETECTORS.map((d) => (
              <th key={d.id} title="findings (per 100 conversations)">
                {d.label}
              </th>
            ))}
            <th>Cost</th>
            <th>Tokens over threshold</th>
          </tr>
        </thead>
        <tbody>
          {trends.items.map((item) => (
            <tr
              key={`${item.bucket}|${item.key}`}
              data-bucket={item.bucket}
              data-key={item.key ?? ''}
            >
              <td className="nowrap">{item.bucket}</td>
              <td>{keyLabel(item.key, by)}</td>
              <td data-field="conversations">{item.conversations}</td>
              <td data-field="calls">{item.calls}</td>
              {DETECTORS.map((d) => (
                <td key={d.id} data-field={d.id} data-count={item.findings[d.id]}>
                  {item.findings[d.id]}{' '}
                  <span className="muted rate">
                    ({formatRate(rateOf(item.findings[d.id], item.conversations))})
                  </span>
                </td>
              ))}
              <td data-field="costUsd" data-value={item.costUsd ?? ''}>
                {formatCost(item.costUsd)}
              </td>
              <td data-field="tokensOverThreshold" data-value={item.tokensOverThreshold}>
                {formatTokens(item.tokensOverThreshold)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

const W = 320;
const H = 130;
const PAD = { left: 34, right: 8, top: 8, bottom: 20 };

/** Findings of one detector per 100 conversations, a line per key over the buckets. */
function RateChart(props: {
  title: string;
  detector: (typeof DETECTORS)[number]['id'];
  buckets: string[];
  items: TrendItem[];
  keys: Array<string | null>;
  colour: (key: string | null) => string;
}) {
  const { detector, buckets, items, keys, colour } = props;
  const rates = items.map((i) => rateOf(i.findings[detector], i.conversations) ?? 0);
  const max = Math.max(10, ...rates);
  const x = (bucket: string) => {
    const i = buckets.indexOf(bucket);
    const span = Math.max(buckets.length - 1, 1);
    return PAD.left + (W - PAD.left - PAD.right) * (buckets.length === 1 ? 0.5 : i / span);
  };
  const y = (rate: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - rate / max);
  return (
    <figure className="trend-chart" data-detector={detector}>
      <figcaption>{props.title} per 100 conversations</figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        width={W}
        height={H}
        role="img"
        aria-label={`${props.title} per 100 conversations`}
      >
        <line x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} stroke="#9ca3af" />
        <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={y(0)} stroke="#9ca3af" />
        <text x={PAD.left - 4} y={y(max) + 4} textAnchor="end" fontSize="10" fill="currentColor">
          {formatRate(max)}
        </text>
        <text x={PAD.left - 4} y={y(0)} textAnchor="end" fontSize="10" fill="currentColor">
          0
        </text>
        <text x={PAD.left} y={H - 4} fontSize="10" fill="currentColor">
          {buckets[0]}
        </text>
        <text x={W - PAD.right} y={H - 4} fontSize="10" fill="currentColor" textAnchor="end">
          {buckets.at(-1)}
        </text>
        {keys.map((key) => {
          const points = items
            .filter((i) => i.key === key && buckets.includes(i.bucket))
            .map((i) => ({ i, rate: rateOf(i.findings[detector], i.conversations) ?? 0 }));
          return (
            <g key={String(key)} stroke={colour(key)} fill={colour(key)}>
              {points.length > 1 && (
                <polyline
                  fill="none"
                  strokeWidth="1.5"
                  points={points.map((p) => `${x(p.i.bucket)},${y(p.rate)}`).join(' ')}
                />
              )}
              {points.map((p) => (
                <circle key={p.i.bucket} cx={x(p.i.bucket)} cy={y(p.rate)} r="3">
                  <title>
                    {`${p.i.bucket} ${key ?? ''}: ${p.i.findings[detector]} in ${p.i.conversations} conversations (${formatRate(p.rate)} per 100)`}
                  </title>
                </circle>
              ))}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

function BeforeAfterView({
  at,
  sideDays,
  params,
}: {
  at: string;
  sideDays: string;
  params: Record<string, string | undefined>;
}) {
  const [draft, setDraft] = useState(at === 'guard' ? '' : at);
  useEffect(() => setDraft(at === 'guard' ? '' : at), [at]);
  const answer = useApi<BeforeAfter>(
    at ? withQuery('/api/trends/before-after', { at, days: sideDays }) : undefined,
  );
  return (
    <section className="before-after">
      <h2>Did the change help? Before and after</h2>
      <form
        className="filters"
        onSubmit={(event) => {
          event.preventDefault();
          redirect(['trends'], { ...params, at: draft });
        }}
      >
        <label>
          The change, on (UTC)
          <input
            aria-label="Change date"
            type="date"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
          />
        </label>
        <label>
          Days each side
          <input
            aria-label="Days each side"
            type="number"
            min={1}
            max={366}
            value={sideDays}
            onChange={(event) => redirect(['trends'], { ...params, sideDays: event.target.value })}
          />
        </label>
        <button type="submit" className="secondary">
          Compare
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => redirect(['trends'], { ...params, at: 'guard' })}
        >
          At the first guard decision
        </button>
      </form>
      {!at && <p className="muted">Pick the day of a change (a threshold, a model, the guard).</p>}
      <ErrorMessage error={answer.error} />
      {answer.loading && !answer.data && <Loading what="before and after" />}
      {answer.data && at && <Comparison data={answer.data} />}
    </section>
  );
}

function sideCell(side: Side, detector: (typeof DETECTORS)[number]['id']) {
  return (
    <>
      <strong className="rate">{formatRate(side.per100[detector])}</strong>{' '}
      <span className="muted">
        ({side.findings[detector]} in {side.conversations})
      </span>
    </>
  );
}

function Comparison({ data }: { data: BeforeAfter }) {
  const enough = data.before.enough && data.after.enough;
  return (
    <>
      <p className={enough ? 'verdict' : 'verdict warning'} role="status">
        {data.verdict}
      </p>
      <p className="muted">
        At {data.at.slice(0, 16).replace('T', ' ')} UTC
        {data.atSource === 'guard' ? ' (the first guard decision)' : ''}; {data.days} days on each
        side.
      </p>
      <table className="before-after-table">
        <thead>
          <tr>
            <th>Per 100 conversations</th>
            <th>Before</th>
            <th>After</th>
            <th>Change</th>
          </tr>
        </thead>
        <tbody>
          {DETECTORS.map((d) => {
            const b = data.before.per100[d.id];
            const a = data.after.per100[d.id];
            return (
              <tr key={d.id} data-detector={d.id}>
                <td>{d.label}</td>
                <td data-side="before">{sideCell(data.before, d.id)}</td>
                <td data-side="after">{sideCell(data.after, d.id)}</td>
                <td data-field="change">
                  {!enough || a === null || b === null
                    ? 'too few to tell'
                    : `${a - b > 0 ? '+' : ''}${formatRate(a - b)}`}
                </td>
              </tr>
            );
          })}
          <tr data-detector="conversations">
            <td>Conversations (calls)</td>
            <td data-side="before">
              {data.before.conversations} ({data.before.calls})
            </td>
            <td data-side="after">
              {data.after.conversations} ({data.after.calls})
            </td>
            <td />
          </tr>
          <tr data-detector="cost">
            <td>Cost reported</td>
            <td data-side="before">{formatCost(data.before.costUsd)}</td>
            <td data-side="after">{formatCost(data.after.costUsd)}</td>
            <td />
          </tr>
          <tr data-detector="tokensOverThreshold">
            <td>Tokens over threshold</td>
            <td data-side="before">{formatTokens(data.before.tokensOverThreshold)}</td>
            <td data-side="after">{formatTokens(data.after.tokensOverThreshold)}</td>
            <td />
          </tr>
        </tbody>
      </table>
    </>
  );
}
