/**
 * The context growth strip: one bar per LLM call in start order, height = the call's usage as
 * a share of its model's window, stacked by part where the sizes are known (a tool's results on
 * every call whose input still holds them, as tool_takeover counts them), in the call's usage
 * colour (the workspace's bands) where nothing measured it; side calls in a lane of their own
 * under the bars; lines at the bands; a ▼ at each drop and marks for cut-off outputs, tool
 * takeovers and the fullest call of a context-too-full run, each on the call its text names.
 *
 * Drawn on a canvas of its own (no chart library): the bars are the only dense series and a
 * canvas draws 10,000 of them in one pass, batched by colour, with no DOM node per bar
 * (strip-bars.ts says what goes where). Hover finds the call by index math (x / bar width).
 * Only the marks (a few per run) are DOM buttons, so they can be clicked, focused and read by
 * a screen reader. Drag across the strip to zoom.
 */
import { useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import { formatShare, formatTokens } from '../format.ts';
import { findingTitle, partLabel } from './labels.ts';
import {
  barWidthOf,
  callAt,
  stripRects,
  type StripLayout,
  type StripPalette,
  type StripView,
} from './strip-bars.ts';
import {
  callsLabel,
  callsOf,
  levelOf,
  partsOf,
  wholePercent,
  type StripModel,
} from './strip-model.ts';
import type { Strip, StripFinding } from './types.ts';
import { plural } from '../../../src/model/plural.ts';

const HEIGHT = 264;
/** Room above the bars for the marks. */
const TOP = 26;
/** Between the baseline and the side calls' lane: the sub-agent marker. */
const LANE_GAP = 8;
/** The side calls' lane (when the strip has side calls). */
const LANE = 16;
/** Under everything: the call numbers. */
const LABELS = 16;
const RIGHT = 44;

const TOOL_COLOURS = ['#39c5cf', '#3fb950', '#db61a2', '#e8913a', '#9be9a8', '#bc8cff', '#f2cc60'];
const FIXED_PART_COLOURS: Record<string, string> = {
  system: '#a371f7',
  messages: '#4d7fb8',
  other: '#3b4654',
};
const SIDE_COLOUR = '#8a94a0';
const AGENT_COLOUR = '#6cb6ff';

/** The colour of each part name of the strip (tools take the palette in order). */
export function partColours(parts: readonly string[]): string[] {
  let tool = 0;
  return parts.map(
    (name) => FIXED_PART_COLOURS[name] ?? TOOL_COLOURS[tool++ % TOOL_COLOURS.length] ?? '#39c5cf',
  );
}

function cssVar(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

/** The status line's colours, as the page's stylesheet sets them. */
function levelColours(): StripPalette['level'] {
  return {
    dim: cssVar('--dim', '#5b6673'),
    normal: cssVar('--strip-normal', '#9aa5b1'),
    amber: cssVar('--amber', '#e0a526'),
    red: cssVar('--red', '#e5534b'),
  };
}

/** Where the plot, the baseline and the side calls' lane are, in CSS pixels. */
function layoutOf(width: number, sideCalls: boolean): StripLayout {
  const laneHeight = sideCalls ? LANE : 0;
  const height = HEIGHT - TOP - LANE_GAP - laneHeight - LABELS;
  return {
    plotWidth: Math.max(10, width - RIGHT),
    top: TOP,
    height,
    laneTop: TOP + height + LANE_GAP,
    laneHeight,
  };
}

export interface StripChartProps {
  strip: Strip;
  model: StripModel;
  selected: string | null;
  onSelect: (findingId: string) => void;
}

/** The marks the strip shows: drops, cut-off outputs, tool takeovers, a too-full context. */
function markOf(f: StripFinding): { glyph: string; className: string } | null {
  if (f.detector === 'history_lost')
    return {
      glyph: '▼',
      className: `drop ${f.kind === 'compacted' ? 'drop-compacted' : 'drop-lost'} severity-${f.severity}`,
    };
  if (f.detector === 'output_cut_off')
    return { glyph: '✂', className: `mark-cut severity-${f.severity}` };
  if (f.detector === 'tool_takeover')
    return { glyph: '◆', className: `mark-takeover severity-${f.severity}` };
  if (f.detector === 'context_too_full')
    return { glyph: '●', className: `mark-full severity-${f.severity}` };
  return null;
}

/** Runs of consecutive positions, `[first, last]`, of the positions given (sorted). */
function runsOf(positions: number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const p of positions) {
    const last = runs[runs.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else runs.push([p, p]);
  }
  return runs;
}

export function StripChart({ strip, model, selected, onSelect }: StripChartProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [view, setView] = useState<StripView>({ from: 0, to: model.order.length });
  const [hover, setHover] = useState<{ index: number; x: number } | null>(null);
  const [drag, setDrag] = useState<{ start: number; end: number } | null>(null);
  const colours = useMemo(() => partColours(strip.parts), [strip.parts]);
  const sideCalls = useMemo(() => strip.columns.side.some((s) => s >= 0), [strip]);

  useEffect(() => setView({ from: 0, to: model.order.length }), [model]);

  useEffect(() => {
    const wrap = wrapRef.current;
    if (!wrap) return;
    const observer = new ResizeObserver(() => setWidth(wrap.clientWidth));
    observer.observe(wrap);
    setWidth(wrap.clientWidth);
    return () => observer.disconnect();
  }, []);

  const layout = useMemo(() => layoutOf(width, sideCalls), [width, sideCalls]);
  const { plotWidth } = layout;
  const count = Math.max(0, view.to - view.from);
  const barWidth = barWidthOf(layout, view);
  const baseline = layout.top + layout.height;

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || width === 0) return;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(HEIGHT * ratio);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, HEIGHT);
    const level = levelColours();
    const palette = { parts: colours, level, side: SIDE_COLOUR, agent: AGENT_COLOUR };
    // one path per colour: a single fill for every bar segment of that colour
    for (const [colour, flat] of stripRects(strip, model, view, layout, palette)) {
      const path = new Path2D();
      for (let k = 0; k + 3 < flat.length; k += 4)
        path.rect(flat[k]!, flat[k + 1]!, flat[k + 2]!, flat[k + 3]!);
      ctx.fillStyle = colour;
      ctx.fill(path);
    }
    // the bands: dim below, amber from the usage threshold, red from the critical one
    const { dimBelow, amberFrom, redFrom } = strip.bands;
    const lines: Array<[number, string]> = [
      ...(dimBelow < amberFrom ? [[dimBelow, level.dim] as [number, string]] : []),
      ...(redFrom > amberFrom ? [[amberFrom, level.amber] as [number, string]] : []),
      [redFrom, level.red],
    ];
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const [share, colour] of lines) {
      const y = Math.round(baseline - share * layout.height) + 0.5;
      ctx.strokeStyle = colour;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(0, y);
      ctx.lineTo(plotWidth, y);
      ctx.stroke();
      ctx.fillStyle = colour;
      ctx.fillText(formatShare(share), plotWidth + 4, y);
    }
    ctx.setLineDash([]);
    const line = cssVar('--line', '#2a3038');
    const muted = cssVar('--muted', '#8a94a0');
    ctx.strokeStyle = line;
    ctx.beginPath();
    ctx.moveTo(0, baseline + 0.5);
    ctx.lineTo(plotWidth, baseline + 0.5);
    const laneBottom = layout.laneTop + layout.laneHeight;
    if (layout.laneHeight > 0) {
      ctx.moveTo(0, laneBottom + 0.5);
      ctx.lineTo(plotWidth, laneBottom + 0.5);
    }
    ctx.stroke();
    ctx.fillStyle = muted;
    if (layout.laneHeight > 0) ctx.fillText('side', plotWidth + 4, layout.laneTop + LANE / 2);
    ctx.textBaseline = 'top';
    ctx.fillText(`#${view.from + 1}`, 0, laneBottom + 3);
    const last = `#${view.to}`;
    ctx.fillText(last, plotWidth - ctx.measureText(last).width, laneBottom + 3);
    ctx.fillText('100%', plotWidth + 4, TOP - 6);
    canvas.dataset['drawnCalls'] = String(count);
    // where things are, for the browser tests that read the canvas's pixels
    canvas.dataset['plotWidth'] = String(plotWidth);
    canvas.dataset['plotTop'] = String(layout.top);
    canvas.dataset['baseline'] = String(baseline);
    canvas.dataset['laneTop'] = String(layout.laneTop);
    canvas.dataset['laneBottom'] = String(laneBottom);
    canvas.dataset['drawnAt'] = String(performance.now());
  }, [strip, model, view, width, colours, layout, count, plotWidth, baseline]);

  const indexAt = (clientX: number, clientY: number): { index: number; x: number } | null => {
    const canvas = canvasRef.current;
    if (!canvas) return null;
    const box = canvas.getBoundingClientRect();
    return callAt(strip, model, view, layout, clientX - box.left, clientY - box.top);
  };

  const onMove = (event: MouseEvent<HTMLCanvasElement>) => {
    setHover(indexAt(event.clientX, event.clientY));
    if (drag) setDrag({ ...drag, end: event.clientX });
  };
  const onUp = (event: MouseEvent<HTMLCanvasElement>) => {
    if (!drag) return;
    setDrag(null);
    const left = canvasRef.current?.getBoundingClientRect().left ?? 0;
    const [a, b] = [drag.start, event.clientX].sort((p, q) => p - q) as [number, number];
    if (b - a < 6) return;
    const from = view.from + Math.max(0, Math.floor((a - left) / barWidth));
    const to = Math.min(view.to, view.from + Math.ceil((b - left) / barWidth));
    if (to - from >= 2) setView({ from, to });
  };

  const marks = strip.findings
    .map((f) => ({ f, mark: markOf(f), at: f.index === null ? -1 : model.positionOf[f.index]! }))
    .filter((m) => m.mark !== null && m.at >= view.from && m.at < view.to);

  const guarded = guardByCall(strip);
  const guardMarks = [...guarded]
    .map(([index, acts]) => ({ index, acts, at: model.positionOf[index]! }))
    .filter((m) => m.at !== undefined && m.at >= view.from && m.at < view.to);

  const hovered = hover ? callDetail(strip, model, hover.index) : null;
  const selectedAt = strip.findings.find((f) => f.findingId === selected);
  const selectedRuns = runsOf(
    (selectedAt ? callsOf(selectedAt) : [])
      .map((i) => model.positionOf[i]!)
      .filter((p) => p >= view.from && p < view.to)
      .sort((a, b) => a - b),
  );
  const dragLeft = drag ? Math.min(drag.start, drag.end) : 0;
  const canvasLeft = canvasRef.current?.getBoundingClientRect().left ?? 0;

  return (
    <div className="strip">
      <div className="strip-bar">
        <span className="muted">
          {count === model.order.length
            ? plural(count, 'call')
            : `calls ${view.from + 1}–${view.to} of ${model.order.length.toLocaleString('en-US')}`}
          {' · drag across the strip to zoom'}
        </span>
        {count !== model.order.length && (
          <button
            type="button"
            className="secondary"
            onClick={() => setView({ from: 0, to: model.order.length })}
          >
            Reset zoom
          </button>
        )}
      </div>
      <div className="strip-plot" ref={wrapRef} style={{ height: HEIGHT }}>
        <canvas
          ref={canvasRef}
          className="strip-canvas"
          style={{ width: '100%', height: HEIGHT }}
          aria-label={`Context growth strip: ${plural(count, 'call')}`}
          role="img"
          onMouseMove={onMove}
          onMouseLeave={() => {
            setHover(null);
            setDrag(null);
          }}
          onMouseDown={(event) => setDrag({ start: event.clientX, end: event.clientX })}
          onMouseUp={onUp}
        />
        {/* keys of their own kind: siblings of the finding marks, whose ids are numbers too */}
        {selectedRuns.map(([first, last]) => (
          <div
            key={`selected-${first}`}
            className="strip-selected"
            style={{
              left: (first - view.from) * barWidth,
              width: Math.max((last - first + 1) * barWidth, 2),
              top: TOP,
              height: layout.laneTop + layout.laneHeight - TOP,
            }}
          />
        ))}
        {drag && Math.abs(drag.end - drag.start) > 2 && (
          <div
            className="strip-brush"
            style={{
              left: dragLeft - canvasLeft,
              width: Math.abs(drag.end - drag.start),
              top: TOP,
              height: layout.height,
            }}
          />
        )}
        {marks.map(({ f, mark, at }) => {
          const where = callsLabel(callsOf(f));
          return (
            <button
              key={`finding-${f.findingId}`}
              type="button"
              className={`strip-mark ${mark!.className}${f.findingId === selected ? ' selected' : ''}`}
              style={{ left: (at - view.from + 0.5) * barWidth }}
              title={`${findingTitle(f)} at ${where}: ${f.summary}`}
              aria-label={`${findingTitle(f)} at ${where.replaceAll('#', '')}`}
              data-finding={f.findingId}
              onClick={() => onSelect(f.findingId)}
            >
              {mark!.glyph}
            </button>
          );
        })}
        {guardMarks.map(({ index, acts, at }) => (
          <span
            key={`guard-${index}`}
            className={`guard-mark ${acts.some((a) => a.action === 'narrowed') ? 'guard-narrowed' : 'guard-warned'}`}
            style={{ left: (at - view.from + 0.5) * barWidth }}
            title={`#${index + 1}: ${acts.map(guardText).join('; ')}`}
            aria-label={`guard at call ${index + 1}: ${acts.map(guardText).join('; ')}`}
            data-call={index + 1}
            role="note"
          >
            ◊
          </span>
        ))}
        {hover && hovered && (
          <div
            className="strip-tooltip"
            role="tooltip"
            style={
              hover.x > plotWidth / 2
                ? { right: width - hover.x + 8, top: TOP }
                : { left: hover.x + 8, top: TOP }
            }
          >
            {hovered}
          </div>
        )}
      </div>
      <StripLegend strip={strip} colours={colours} sideCalls={sideCalls} />
    </div>
  );
}

type GuardAct = Strip['guard'][number];

/** The guard's decisions by the strip index of the call they acted on. */
function guardByCall(strip: Strip): Map<number, GuardAct[]> {
  const byCall = new Map<number, GuardAct[]>();
  for (const act of strip.guard) {
    if (act.index === null) continue;
    byCall.set(act.index, [...(byCall.get(act.index) ?? []), act]);
  }
  return byCall;
}

/** "narrowed a Read: 4.5k tokens kept out" / "warned about a Bash result of 12k tokens". */
function guardText(act: GuardAct): string {
  return act.action === 'narrowed'
    ? `the guard narrowed a ${act.tool}: ${formatTokens(act.keptOutTokens)} tokens kept out`
    : `the guard warned about a ${act.tool} result of ${formatTokens(act.resultTokens)} tokens`;
}

/** The hover card of call `i`. */
function callDetail(strip: Strip, model: StripModel, i: number) {
  const c = strip.columns;
  const stream = strip.streams[c.stream[i] ?? 0];
  const side = (c.side[i] ?? -1) >= 0 ? strip.sideCalls[c.side[i]!] : null;
  const finish = (c.finish[i] ?? -1) >= 0 ? strip.finishReasons[c.finish[i]!] : null;
  const source = (c.windowSource[i] ?? -1) >= 0 ? strip.windowSources[c.windowSource[i]!] : null;
  const share = model.share[i]!;
  const parts = partsOf(strip, i);
  const used = c.context[i] ?? null;
  // token counts but no window: not judged for context too full
  const windowUnknown = used !== null && (c.window[i] ?? null) === null;
  // a part's share of the input, as the findings write it (tool_takeover: tokens / the input)
  const partShare = (tokens: number) =>
    used !== null && used > 0 ? ` (${wholePercent(tokens / used)})` : '';
  return (
    <dl>
      <dt>Call</dt>
      <dd>
        #{i + 1} · +{(c.startMs[i]! / 1000).toFixed(1)} s
        {stream?.agentId ? ` · sub-agent ${stream.agentId}` : ''}
        {side ? ` · side call (${side}), not a call of its thread` : ''}
      </dd>
      <dt>Model</dt>
      <dd>{(c.model[i] ?? -1) >= 0 ? strip.models[c.model[i]!] : 'unknown'}</dd>
      <dt>Usage</dt>
      <dd className={`level-${levelOf(share, strip.bands)}`}>
        {windowUnknown
          ? `${formatTokens(c.context[i])} tokens · window unknown`
          : `${formatTokens(c.context[i])} of ${formatTokens(c.window[i])} (${wholePercent(share)})`}
      </dd>
      <dt>Tokens</dt>
      <dd>
        input {formatTokens(c.input[i])} · cache read {formatTokens(c.cacheRead[i])} · cache write{' '}
        {formatTokens(c.cacheWrite[i])} · output {formatTokens(c.output[i])}
      </dd>
      <dt>Window</dt>
      <dd className={windowUnknown ? 'window-unknown' : undefined}>
        {windowUnknown
          ? 'unknown: no source knows this model, so the call is not judged for context too full; set a window override on the Context rot alert page'
          : formatTokens(c.window[i])}
        {source ? ` (${source})` : ''}
      </dd>
      <dt>Finish</dt>
      <dd>{finish ?? 'not sent'}</dd>
      {guardByCall(strip).has(i) && (
        <>
          <dt>Guard</dt>
          <dd>{guardByCall(strip).get(i)!.map(guardText).join('; ')}</dd>
        </>
      )}
      <dt>Parts</dt>
      <dd>
        {parts.length === 0
          ? 'sizes not known'
          : parts
              .map((p) => `${partLabel(p.name)} ${formatTokens(p.tokens)}${partShare(p.tokens)}`)
              .join(' · ')}
      </dd>
    </dl>
  );
}

function StripLegend({
  strip,
  colours,
  sideCalls,
}: {
  strip: Strip;
  colours: string[];
  sideCalls: boolean;
}) {
  const { bands } = strip;
  const level = levelColours();
  return (
    <ul className="strip-legend">
      {strip.parts.map((name, k) =>
        name === 'other' ? (
          <li key={name}>
            <span
              className="swatch"
              style={{
                background: `linear-gradient(90deg, ${level.dim}, ${level.normal}, ${level.amber}, ${level.red})`,
              }}
            />
            not measured (in the usage colour)
          </li>
        ) : (
          <li key={name}>
            <span className="swatch" style={{ background: colours[k] }} />
            {partLabel(name)}
          </li>
        ),
      )}
      <li>
        <span className="swatch" style={{ background: level.dim }} />
        below {formatShare(bands.dimBelow)}
      </li>
      {bands.dimBelow < bands.amberFrom && (
        <li>
          <span className="swatch" style={{ background: level.normal }} />
          {formatShare(bands.dimBelow)}–{formatShare(bands.amberFrom)}
        </li>
      )}
      {bands.redFrom > bands.amberFrom && (
        <li>
          <span className="swatch" style={{ background: level.amber }} />
          from {formatShare(bands.amberFrom)}
        </li>
      )}
      <li>
        <span className="swatch" style={{ background: level.red }} />
        from {formatShare(bands.redFrom)}
      </li>
      <li>
        <span className="legend-glyph severity-warning">▼</span> history lost
      </li>
      <li>
        <span className="legend-glyph severity-info">▼</span> compacted
      </li>
      <li>
        <span className="legend-glyph">✂</span> output cut off
      </li>
      <li>
        <span className="legend-glyph">◆</span> tool takeover
      </li>
      {strip.guard.length > 0 && (
        <li>
          <span className="legend-glyph guard-mark-glyph">◊</span> the tool-result guard acted (its
          result reached this call)
        </li>
      )}
      <li>
        <span className="legend-glyph">●</span> context too full (its fullest call)
      </li>
      <li>
        <span className="swatch swatch-agent" /> sub-agent call
      </li>
      {sideCalls && (
        <li>
          <span className="swatch" style={{ background: SIDE_COLOUR }} /> side call (a compaction, a
          title): the lane under the bars, on its own scale
        </li>
      )}
    </ul>
  );
}
