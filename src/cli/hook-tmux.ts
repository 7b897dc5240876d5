/** The hook's line in the tmux status bar (./hook.ts, PreCompact): only when run inside tmux. */
import { execFile } from 'node:child_process';
import type { Env } from './hook-log.ts';
import { str } from './statusline.ts';

/** How long tmux may take (ms): the hook's one bound, as for the server (./hook-otlp.ts). */
const TMUX_TIMEOUT_MS = 1000;

/** Shows `text` in the tmux status bar; spawns tmux only inside tmux. Resolves with an error text or null. */
export function tmuxMessage(text: string, env: Env): Promise<string | null> {
  if (!str(env.TMUX)) return Promise.resolve(null);
  return new Promise((resolve) =>
    execFile('tmux', ['display-message', text], { timeout: TMUX_TIMEOUT_MS }, (error) =>
      resolve(error ? `tmux display-message failed: ${error.message}` : null),
    ),
  );
}
