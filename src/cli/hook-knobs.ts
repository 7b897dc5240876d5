/**
 * The workspace's knobs for the status line and the guard: every `SessionStart` (./hook.ts)
 * fetches `GET /api/agent-knobs` beside its other work, within the same 1 s bound, into the knobs
 * file (`~/.rotscope/knobs.json`, ROTSCOPE_KNOBS_FILE; ./statusline.ts reads it). A server that
 * does not answer leaves the last file in place.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Env, HookLog } from './hook-log.ts';
import { serverTimeoutMs, serverUrl } from './hook-otlp.ts';
import { knobsPath, obj, str } from './statusline.ts';
import { tokenOf } from './token-file.ts';

/** Runs the SessionStart work with the knobs fetch beside it: both within the one bound. */
export async function withKnobs(env: Env, log: HookLog, work: Promise<void>) {
  if (!str(env.ROTSCOPE_URL)) return work;
  await Promise.all([work, saveKnobs(env, log)]);
}

/** The workspace's knobs (GET /api/agent-knobs) into the knobs file; errors go to the log. */
async function saveKnobs(env: Env, log: HookLog): Promise<void> {
  const file = knobsPath(env);
  if (file === null) return;
  const url = serverUrl(env, '/api/agent-knobs');
  const token = tokenOf(env);
  try {
    const response = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(serverTimeoutMs(env)),
    });
    if (!response.ok) {
      log(`error=knobs not fetched: ${url} answered ${response.status}`);
      return;
    }
    const knobs = obj(await response.json());
    if (!knobs || !obj(knobs.bands)) throw new Error(`${url} sent no bands`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...knobs, url }, null, 2)}\n`);
    renameSync(`${file}.tmp`, file);
  } catch (error) {
    log(`error=knobs not fetched: ${url}: ${(error as Error).message}`);
  }
}
