/**
 * What the strip's canvas paints, as rectangles batched by colour, and which call sits under a
 * point: pure geometry, no DOM (StripChart.tsx paints it).
 *
 * - A call of a stream (the main thread or a sub-agent) is a bar above the baseline, its height
 *   its usage over its window. Stacked by part where the sizes are known: the tools' results
 *   in their colours, the system prompt and the measured messages in theirs, and what no one
 *   measured in the call's usage colour (the workspace's bands), so a bar reads in the status
 *   line's colour however much of it is unmeasured; a cap of that colour on top. A bar with no
 *   part sizes is all in its usage colour.
 * - A side call (a compaction, a title) never counts as its stream's next call: it is drawn in
 *   a lane of its own under the baseline, at the lane's scale and in one neutral colour, so a
 *   compaction call holding the whole history does not look like the fullest main call.
 * - More calls than pixels: each pixel column draws its fullest call (peaks are kept), and the
 *   fullest side call in the lane.
 */
import { isSideCall, isSubAgent, levelOf, type StripModel } from './strip-model.ts';
import type { Strip } from './types.ts';

export interface StripView {
  from: number;
  to: number;
}

export interface StripLayout {
  plotWidth: number;
  /** The main plot's top (a share of 1) and height. */
  top: number;
  height: number;
  /** The side calls' lane, under the baseline. */
  laneTop: number;
  laneHeight: number;
}

export interface StripPalette {
  /** The colour of each part of `strip.parts`. */
  parts: readonly string[];
  level: Record<'dim' | 'normal' | 'amber' | 'red', string>;
  side: string;
  agent: string;
}

/** Flat `[x, y, w, h, ...]` per colour: one fill per colour. */
export type StripRects = Map<string, number[]>;

/** The height of the colour cap on a stacked bar. */
const CAP = 3;

export function barWidthOf(layout: StripLayout, view: StripView): number {
  const count = Math.max(0, view.to - view.from);
  return count > 0 ? layout.plotWidth / count : layout.plotWidth;
}

/** A call's size on its scale: its share, or its usage over the largest when the window is unknown. */
function fill(strip: Strip, model: StripModel, i: number): number | null {
  const used = strip.columns.context[i] ?? null;
  if (used === null) return null;
  const share = model.share[i]!;
  return Number.isNaN(share) ? used / (model.maxContext || 1) : share;
}

/**
 * The position (in the view) of the fullest call, of the side calls or of the others, among
 * those pixel column `px` covers; -1 when it covers none with a usage.
 */
function fullestIn(
  strip: Strip,
  model: StripModel,
  view: StripView,
  barWidth: number,
  px: number,
  side: boolean,
): number {
  const count = view.to - view.from;
  const first = Math.floor(px / barWidth);
  const last = Math.min(count, Math.max(first + 1, Math.floor((px + 1) / barWidth)));
  let best = -1;
  let bestValue = -1;
  for (let k = first; k < last; k++) {
    const i = model.order[view.from + k]!;
    if (isSideCall(strip, i) !== side) continue;
    const value = fill(strip, model, i);
    if (value !== null && value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  return best;
}

/** The rectangles of the calls in `view`. */
export function stripRects(
  strip: Strip,
  model: StripModel,
  view: StripView,
  layout: StripLayout,
  palette: StripPalette,
): StripRects {
  const rects: StripRects = new Map();
  const rect = (colour: string, x: number, y: number, w: number, h: number) => {
    if (h <= 0) return;
    let list = rects.get(colour);
    if (!list) rects.set(colour, (list = []));
    list.push(x, y, w, h);
  };
  const count = Math.max(0, view.to - view.from);
  const barWidth = barWidthOf(layout, view);
  const gap = barWidth >= 4 ? 1 : 0;
  const dense = barWidth < 1;
  const w = dense ? 1 : Math.max(barWidth - gap, 0.6);
  const baseline = layout.top + layout.height;
  const laneBottom = layout.laneTop + layout.laneHeight;
  const other = strip.parts.indexOf('other');
  const { columns } = strip;

  const bar = (i: number, x: number) => {
    const size = fill(strip, model, i);
    const used = columns.context[i] ?? null;
    if (size === null || used === null || used <= 0) return;
    const tone = palette.level[levelOf(model.share[i]!, strip.bands)];
    const height = Math.min(size, 1) * layout.height;
    const top = baseline - height;
    const pairs = columns.parts[i];
    if (!pairs || pairs.length === 0) {
      rect(tone, x, top, w, height);
    } else {
      let y = baseline;
      for (let p = 0; p + 1 < pairs.length; p += 2) {
        // parts past the bar's top (estimates adding up to more than the usage) stop there
        const h = Math.min((pairs[p + 1]! / used) * height, y - top);
        const part = pairs[p]!;
        rect(part === other ? tone : (palette.parts[part] ?? tone), x, y - h, w, h);
        y -= h;
      }
      rect(tone, x, top, w, Math.min(CAP, height));
    }
    if (isSubAgent(strip, i)) rect(palette.agent, x, baseline + 2, w, 3);
  };
  const sideBar = (i: number, x: number) => {
    const size = fill(strip, model, i);
    if (size === null) return;
    const height = Math.max(1, Math.min(size, 1) * layout.laneHeight);
    rect(palette.side, x, laneBottom - height, w, height);
  };

  if (!dense) {
    for (let k = 0; k < count; k++) {
      const i = model.order[view.from + k]!;
      if (isSideCall(strip, i)) sideBar(i, k * barWidth);
      else bar(i, k * barWidth);
    }
    return rects;
  }
  for (let px = 0; px < Math.ceil(layout.plotWidth); px++) {
    const k = fullestIn(strip, model, view, barWidth, px, false);
    if (k >= 0) bar(model.order[view.from + k]!, px);
    const s = fullestIn(strip, model, view, barWidth, px, true);
    if (s >= 0) sideBar(model.order[view.from + s]!, px);
  }
  return rects;
}

/**
 * The call drawn at `(x, y)` of the canvas (where a pixel column holds several calls, the
 * fullest drawn there: the side call's in the lane, else the bar's); null outside the calls.
 */
export function callAt(
  strip: Strip,
  model: StripModel,
  view: StripView,
  layout: StripLayout,
  x: number,
  y: number,
): { index: number; x: number } | null {
  const count = view.to - view.from;
  if (count <= 0 || x < 0 || x >= layout.plotWidth) return null;
  const barWidth = barWidthOf(layout, view);
  let k = Math.min(count - 1, Math.floor(x / barWidth));
  if (barWidth < 1) {
    const inLane = y >= layout.laneTop - 1;
    const px = Math.floor(x);
    k = fullestIn(strip, model, view, barWidth, px, inLane);
    if (k < 0) k = fullestIn(strip, model, view, barWidth, px, !inLane);
    if (k < 0) return null;
  }
  return { index: model.order[view.from + k]!, x: (k + 0.5) * barWidth };
}
