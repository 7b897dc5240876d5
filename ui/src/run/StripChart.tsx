/**
 * The context growth strip: one bar per LLM call in start order, height = the call's usage as
 * a share of its model's window, stacked by part where the sizes are known, a plain bar in the
 * status line's colour otherwise; lines at the usage thresholds; a ▼ at each drop and marks for
 * cut-off outputs and tool takeovers.
 *
 * Drawn on a canvas of its own (no chart library): the bars are the only dense series and a
 * canvas draws 10,000 of them in one pass, batched by colour, with no DOM node per bar. Hover
 * finds the call by index math (x / bar width). Only the marks (a few per run) are DOM buttons,
 * so they can be clicked, focused and read by a screen reader. Drag across the strip to zoom.
 */
import { useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import { formatShare, formatTokens } from '../format.ts';
import { findingTitle, partLabel } from './labels.ts';
import { isSideCall, isSubAgent, levelOf, partsOf, type StripModel } from './strip-model.ts';
import type { Strip, StripFinding } from './types.ts';

const HEIGHT = 240;
/** Room above the bars for the marks. */
const TOP = 26;
const BOTTOM = 18;
const RIGHT = 44;

const TOOL_COLOURS = ['#39c5cf', '#3fb950', '#db61a2', '#e8913a', '#9be9a8', '#bc8cff', '#f2cc60'];
const FIXED_PART_COLOURS: Record<string, string> = {
  system: '#a371f7',
  messages: '#4d7fb8',
  other: '#3b4654',
};

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

interface View {
  from: number;
  to: number;
}

export interface StripChartProps {
  strip: Strip;
  model: StripModel;
  selected: string | null;
  onSelect: (findingId: string) => void;
}

/** The marks the strip shows: drops, cut-off outputs, tool takeovers. */
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
  return null;
}

export function StripChart({ strip, model, selected, onSelect }: StripChartProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [view, setView] = useState<View>({ from: 0, to: model.order.length });
  const [hover, setHover] = useState<{ index: number; x: number } | null>(null);
  const [drag, setDrag] = useState<{ start: number; end: number } | null>(null);
  const colours = useMemo(() => partColours(strip.parts), [strip.parts]);

  useEffect(() => setView({ from: 0, to: model.order.length }), [model]);

  useEffect(() => {
    const wrap = wrapRef.current;
    if (!wrap) return;
    const observer = new ResizeObserver(() => setWidth(wrap.clientWidth));
    observer.observe(wrap);
    setWidth(wrap.clientWidth);
    return () => observer.disconnect();
  }, []);

  const plotWidth = Math.max(10, width - RIGHT);
  const count = Math.max(0, view.to - view.from);
  const barWidth = count > 0 ? plotWidth / count : plotWidth;
  const plotHeight = HEIGHT - TOP - BOTTOM;

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
    const level = {
      dim: cssVar('--dim', '#5b6673'),
      normal: cssVar('--strip-normal', '#9aa5b1'),
      amber: cssVar('--amber', '#e0a526'),
      red: cssVar('--red', '#e5534b'),
    };
    const baseline = TOP + plotHeight;
    const { columns } = strip;
    // one path per colour: a single fill for every bar segment of that colour
    const paths = new Map<string, Path2D>();
    const rect = (colour: string, x: number, y: number, w: number, h: number) => {
      let path = paths.get(colour);
      if (!path) {
        path = new Path2D();
        paths.set(colour, path);
      }
      path.rect(x, y, w, h);
    };
    const gap = barWidth >= 4 ? 1 : 0;
    const dense = barWidth < 1;
    const w = dense ? 1 : Math.max(barWidth - gap, 0.6);
    // more calls than pixels: each pixel column draws its fullest call (peaks are kept)
    const slots = dense ? Math.ceil(plotWidth) : count;
    for (let slot = 0; slot < slots; slot++) {
      const k = dense ? fullestIn(slot, barWidth, count, view.from, model, columns.context) : slot;
      if (k < 0) continue;
      const i = model.order[view.from + k]!;
      const used = columns.context[i] ?? null;
      if (used === null) continue;
      const share = model.share[i]!;
      const size = Number.isNaN(share) ? model.maxContext || 1 : (columns.window[i] ?? 1);
      const x = dense ? slot : k * barWidth;
      const height = Math.min(used / size, 1) * plotHeight;
      const pairs = columns.parts[i];
      const tone = level[Number.isNaN(share) ? 'dim' : levelOf(share)];
      if (pairs && pairs.length > 0) {
        let y = baseline;
        for (let p = 0; p + 1 < pairs.length; p += 2) {
          const h = (Math.min(pairs[p + 1]!, used) / used) * height;
          y -= h;
          rect(colours[pairs[p]!] ?? '#3b4654', x, y, w, h);
        }
        // the status line's colour as a cap on a stacked bar
        rect(tone, x, baseline - height, w, Math.min(3, height));
      } else {
        rect(tone, x, baseline - height, w, height);
      }
      if (isSideCall(strip, i) || isSubAgent(strip, i))
        rect(isSideCall(strip, i) ? '#8a94a0' : '#6cb6ff', x, baseline + 2, w, 3);
    }
    for (const [colour, path] of paths) {
      ctx.fillStyle = colour;
      ctx.fill(path);
    }
    // thresholds: 60 % (dim below), the alert's warning and critical shares
    const lines: Array<[number, string]> = [
      [0.6, level.dim],
      [strip.thresholds.usageThreshold, level.amber],
      [strip.thresholds.usageCritical, level.red],
    ];
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const [share, colour] of lines) {
      const y = Math.round(baseline - share * plotHeight) + 0.5;
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
    ctx.strokeStyle = cssVar('--line', '#2a3038');
    ctx.beginPath();
    ctx.moveTo(0, baseline + 0.5);
    ctx.lineTo(plotWidth, baseline + 0.5);
    ctx.stroke();
    ctx.fillStyle = cssVar('--muted', '#8a94a0');
    ctx.textBaseline = 'top';
    ctx.fillText(`#${view.from + 1}`, 0, baseline + 6);
    const last = `#${view.to}`;
    ctx.fillText(last, plotWidth - ctx.measureText(last).width, baseline + 6);
    ctx.fillText('100%', plotWidth + 4, TOP - 6);
    canvas.dataset['drawnCalls'] = String(count);
    canvas.dataset['drawnAt'] = String(performance.now());
  }, [strip, model, view, width, colours, barWidth, count, plotHeight, plotWidth]);

  const indexAt = (clientX: number): { index: number; x: number } | null => {
    const canvas = canvasRef.current;
    if (!canvas || count === 0) return null;
    const x = clientX - canvas.getBoundingClientRect().left;
    if (x < 0 || x >= plotWidth) return null;
    // where pixels hold several calls, the one drawn there: the fullest
    const k =
      barWidth < 1
        ? fullestIn(Math.floor(x), barWidth, count, view.from, model, strip.columns.context)
        : Math.min(count - 1, Math.floor(x / barWidth));
    if (k < 0) return null;
    return { index: model.order[view.from + k]!, x: (k + 0.5) * barWidth };
  };

  const onMove = (event: MouseEvent<HTMLCanvasElement>) => {
    setHover(indexAt(event.clientX));
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

  const hovered = hover ? callDetail(strip, model, hover.index) : null;
  const selectedAt = strip.findings.find((f) => f.findingId === selected);
  const selectedPos =
    selectedAt && selectedAt.index !== null ? model.positionOf[selectedAt.index]! : -1;
  const dragLeft = drag ? Math.min(drag.start, drag.end) : 0;
  const canvasLeft = canvasRef.current?.getBoundingClientRect().left ?? 0;

  return (
    <div className="strip">
      <div className="strip-bar">
        <span className="muted">
          {count === model.order.length
            ? `${count.toLocaleString('en-US')} call${count === 1 ? '' : 's'}`
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
          aria-label={`Context growth strip: ${count} calls`}
          role="img"
          onMouseMove={onMove}
          onMouseLeave={() => {
            setHover(null);
            setDrag(null);
          }}
          onMouseDown={(event) => setDrag({ start: event.clientX, end: event.clientX })}
          onMouseUp={onUp}
        />
        {selectedPos >= view.from && selectedPos < view.to && (
          <div
            className="strip-selected"
            style={{
              left: (selectedPos - view.from) * barWidth,
              width: Math.max(barWidth, 2),
              top: TOP,
              height: plotHeight,
            }}
          />
        )}
        {drag && Math.abs(drag.end - drag.start) > 2 && (
          <div
            className="strip-brush"
            style={{
              left: dragLeft - canvasLeft,
              width: Math.abs(drag.end - drag.start),
              top: TOP,
              height: plotHeight,
            }}
          />
        )}
        {marks.map(({ f, mark, at }) => (
          <button
            key={f.findingId}
            type="button"
            className={`strip-mark ${mark!.className}${f.findingId === selected ? ' selected' : ''}`}
            style={{ left: (at - view.from + 0.5) * barWidth }}
            title={`${findingTitle(f)} at call #${(f.index ?? 0) + 1}: ${f.summary}`}
            aria-label={`${findingTitle(f)} at call ${(f.index ?? 0) + 1}`}
            data-finding={f.findingId}
            onClick={() => onSelect(f.findingId)}
          >
            {mark!.glyph}
          </button>
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
      <StripLegend strip={strip} colours={colours} />
    </div>
  );
}

/**
 * The position (in the view) of the fullest call among those pixel column `px` covers, by
 * usage share (usage when the window is unknown); -1 when it covers none with a usage.
 */
function fullestIn(
  px: number,
  barWidth: number,
  count: number,
  from: number,
  model: StripModel,
  context: Strip['columns']['context'],
): number {
  const first = Math.floor(px / barWidth);
  const last = Math.min(count, Math.max(first + 1, Math.floor((px + 1) / barWidth)));
  let best = -1;
  let bestValue = -1;
  for (let k = first; k < last; k++) {
    const i = model.order[from + k]!;
    const used = context[i] ?? null;
    if (used === null) continue;
    const share = model.share[i]!;
    const value = Number.isNaN(share) ? used / (model.maxContext || 1) : share;
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  return best;
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
  return (
    <dl>
      <dt>Call</dt>
      <dd>
        #{i + 1} · +{(c.startMs[i]! / 1000).toFixed(1)} s
        {stream?.agentId ? ` · sub-agent ${stream.agentId}` : ''}
        {side ? ` · side call (${side})` : ''}
      </dd>
      <dt>Model</dt>
      <dd>{(c.model[i] ?? -1) >= 0 ? strip.models[c.model[i]!] : 'unknown'}</dd>
      <dt>Usage</dt>
      <dd className={`level-${levelOf(share)}`}>
        {formatTokens(c.context[i])} of {formatTokens(c.window[i])} ({formatShare(share)})
      </dd>
      <dt>Tokens</dt>
      <dd>
        input {formatTokens(c.input[i])} · cache read {formatTokens(c.cacheRead[i])} · cache write{' '}
        {formatTokens(c.cacheWrite[i])} · output {formatTokens(c.output[i])}
      </dd>
      <dt>Window</dt>
      <dd>
        {formatTokens(c.window[i])}
        {source ? ` (${source})` : ''}
      </dd>
      <dt>Finish</dt>
      <dd>{finish ?? 'not sent'}</dd>
      <dt>Parts</dt>
      <dd>
        {parts.length === 0
          ? 'sizes not known'
          : parts.map((p) => `${partLabel(p.name)} ${formatTokens(p.tokens)}`).join(' · ')}
      </dd>
    </dl>
  );
}

function StripLegend({ strip, colours }: { strip: Strip; colours: string[] }) {
  return (
    <ul className="strip-legend">
      {strip.parts.map((name, k) => (
        <li key={name}>
          <span className="swatch" style={{ background: colours[k] }} />
          {partLabel(name)}
        </li>
      ))}
      <li>
        <span className="swatch level-swatch-dim" />
        below 60%
      </li>
      <li>
        <span className="swatch level-swatch-amber" />
        from {formatShare(strip.thresholds.usageThreshold)}
      </li>
      <li>
        <span className="swatch level-swatch-red" />
        from {formatShare(strip.thresholds.usageCritical)}
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
      <li>
        <span className="swatch swatch-agent" /> sub-agent call
      </li>
      <li>
        <span className="swatch swatch-side" /> side call
      </li>
    </ul>
  );
}
