/**
 * The token the hook and the guard send to rotscope: `ROTSCOPE_TOKEN`, else the contents of the
 * file `ROTSCOPE_TOKEN_FILE` names. `claude-code install` writes the token into that file (mode
 * 0600) rather than into settings.json, so it is readable by the user alone. Nothing here
 * throws: a file that cannot be read means no token (the server then answers 401, and says so).
 */
import fs from 'node:fs';

export function tokenOf(env: Record<string, string | undefined>): string | undefined {
  const given = env.ROTSCOPE_TOKEN?.trim();
  if (given) return given;
  const file = env.ROTSCOPE_TOKEN_FILE;
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
