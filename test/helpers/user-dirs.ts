/**
 * Each test file gets its own per-user folders: `XDG_DATA_HOME` (where an embedded store goes
 * when no data directory is chosen) and `XDG_STATE_HOME` (where running servers record
 * themselves, src/cli/server-record.ts), inherited by every `rotscope` child the file starts. So
 * a server one test file starts is never found by a command another file runs beside it, and no
 * test writes into the real home. A test of those places itself sets HOME and these variables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const dirs = mkdtempSync(path.join(tmpdir(), 'rotscope-test-user-'));
process.env.XDG_DATA_HOME = path.join(dirs, 'data');
process.env.XDG_STATE_HOME = path.join(dirs, 'state');
afterAll(() => rmSync(dirs, { recursive: true, force: true }));
