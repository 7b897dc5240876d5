/**
 * The page-replay loop the evaluator and the preview share: a conversation's stored calls read
 * page by page from a position, each page's calls given the workspace's window overrides and
 * fed, with the compactions between them, through the detectors. The evaluator feeds one set
 * of knobs and keeps checkpoints; the preview feeds one or two sets (the edited and the stored).
 */
import { driveDetectors, type DetectorStates, type DriveOptions } from '../detectors/drive.ts';
import { buildTimeline } from '../detectors/timeline.ts';
import type { Thresholds } from '../model/thresholds.ts';
import type { WindowOverride } from '../model/window-overrides.ts';
import type { Db } from '../store/db.ts';
import {
  loadTimelinePage,
  type CallStarts,
  type TimelinePage,
  type TimelinePosition,
} from '../store/timeline.ts';
import { applyWindowOverrides } from './window-overrides.ts';

/** The knobs a page is judged with. */
export interface ReplayKnobs {
  thresholds: Thresholds;
  windowOverrides: readonly WindowOverride[];
}

/** One page through the detectors with `knobs`: the states after it. */
export function feedPage(
  states: Readonly<DetectorStates>,
  page: TimelinePage,
  knobs: ReplayKnobs,
  options: DriveOptions,
): DetectorStates {
  const calls = page.calls.map((call) => applyWindowOverrides(call, knobs.windowOverrides));
  const items = buildTimeline(calls, page.compactions);
  return driveDetectors(states, items, { thresholds: knobs.thresholds }, options).states;
}

export interface ReplayResult {
  /** Calls read. */
  calls: number;
  /** After the last call read (the start when none was). */
  position: TimelinePosition | null;
  /** True when the call budget ran out before the conversation's end was seen. */
  budgetSpent: boolean;
  /**
   * Pages read from the database: 0 with the conversation's end seen (not `budgetSpent`) means
   * `firstPage` answered the only read.
   */
  pagesRead: number;
}

/**
 * Reads `key`'s calls after `start`, at most `pageSize` a page and `maxCalls` in all, and hands
 * each non-empty page to `onPage`. `firstPage` may answer the first read from a prefetch.
 */
export async function replayPages(
  db: Db,
  key: { workspaceId: string; conversationId: string },
  start: TimelinePosition | null,
  options: {
    pageSize: number;
    maxCalls: number;
    onPage: (page: TimelinePage) => void;
    firstPage?: (want: number) => TimelinePage | undefined;
    /** The range of the conversation's call starts, when known: only its partitions are read. */
    within?: CallStarts | null | undefined;
  },
): Promise<ReplayResult> {
  let position = start;
  let calls = 0;
  let pagesRead = 0;
  for (;;) {
    if (calls >= options.maxCalls) return { calls, position, budgetSpent: true, pagesRead };
    const want = Math.min(options.pageSize, options.maxCalls - calls);
    let page = calls === 0 && pagesRead === 0 ? options.firstPage?.(want) : undefined;
    if (!page) {
      page = await loadTimelinePage(db, key, position, want, options.within);
      pagesRead += 1;
    }
    if (!page.last) break;
    options.onPage(page);
    position = page.last;
    calls += page.calls.length;
    if (page.calls.length < want) break;
  }
  return { calls, position, budgetSpent: false, pagesRead };
}
