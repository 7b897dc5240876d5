/** The embedded data directory's lock: one holder, stale locks taken over, released on close. */
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  acquireDataDirLock,
  DataDirLockedError,
  LOCK_FILE,
  processIsAlive,
} from '../../../src/store/data-dir-lock.ts';

let dir: string;
let lockFile: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rotscope-lock-'));
  lockFile = path.join(dir, LOCK_FILE);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockOf = (holder: Record<string, unknown>) =>
  writeFileSync(lockFile, JSON.stringify({ startedAt: '2026-01-01T00:00:00.000Z', ...holder }));
const alive = () => true;
const dead = () => false;

describe('data directory lock', () => {
  it('writes the holder, advertises the server address, and removes the file on release', () => {
    const lock = acquireDataDirLock(dir);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({
      pid: process.pid,
      port: null,
      url: null,
    });
    lock.advertise('http://127.0.0.1:4318');
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({
      pid: process.pid,
      port: 4318,
      url: 'http://127.0.0.1:4318',
    });
    lock.release();
    lock.release();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('refuses a second holder in the same process, naming this pid', () => {
    const lock = acquireDataDirLock(dir);
    try {
      expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
      expect(() => acquireDataDirLock(dir)).toThrow(`pid ${process.pid}`);
    } finally {
      lock.release();
    }
  });

  it('refuses a directory held by a live process, naming its pid and address', () => {
    lockOf({ pid: 999_999, port: 4318, url: 'http://127.0.0.1:4318' });
    let error: unknown;
    try {
      acquireDataDirLock(dir, alive);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as DataDirLockedError).holder).toMatchObject({ pid: 999_999, port: 4318 });
    expect((error as Error).message).toContain(
      `is in use by rotscope (pid 999999, serving http://127.0.0.1:4318`,
    );
    expect(readFileSync(lockFile, 'utf8')).toContain('999999'); // left alone
  });

  it("takes over a dead process's lock, and one left by an earlier process with this pid", () => {
    lockOf({ pid: 999_999, port: 4318, url: 'http://127.0.0.1:4318' });
    acquireDataDirLock(dir, dead).release();
    // A restarted container often gets the same pid as the server that was killed in it.
    lockOf({ pid: process.pid, port: 4318, url: 'http://127.0.0.1:4318' });
    const lock = acquireDataDirLock(dir, alive);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).url).toBeNull();
    lock.release();
  });

  it('treats an unreadable lock as being written when fresh, and as stale when old', () => {
    writeFileSync(lockFile, '');
    expect(() => acquireDataDirLock(dir, alive)).toThrow(
      /another rotscope process that is starting/,
    );
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile, old, old);
    acquireDataDirLock(dir, alive).release();
  });

  it('release leaves a lock that another process has since taken', () => {
    const lock = acquireDataDirLock(dir);
    lockOf({ pid: 999_999 });
    lock.release();
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).pid).toBe(999_999);
  });

  it('knows a live pid from a gone one', () => {
    expect(processIsAlive(process.pid)).toBe(true);
    expect(processIsAlive(2 ** 22 + 12_345)).toBe(false); // above Linux's pid_max
  });
});
