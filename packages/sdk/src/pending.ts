/**
 * The pending "your next LLM call was compacted" mark, kept in the async context where
 * `markCompaction` was called (an AsyncLocalStorage, the mechanism OpenTelemetry's Node context
 * manager uses too). `AsyncLocalStorage.enterWith` scopes it like a variable of the current
 * async flow: code after the mark and async work started from there see it; a caller that
 * awaited the marking function, and tasks started in parallel before it, do not. The mark is a
 * shared cell, so the first LLM span that takes it takes it for everyone who sees it: once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Cell {
  pending: boolean;
}

const storage = new AsyncLocalStorage<Cell>();

/** Puts a fresh pending mark into the current async context. */
export function setPendingMark(): void {
  storage.enterWith({ pending: true });
}

/** Takes the pending mark of the current async context: true once, then false. */
export function takePendingMark(): boolean {
  const cell = storage.getStore();
  if (cell === undefined || !cell.pending) return false;
  cell.pending = false;
  return true;
}
