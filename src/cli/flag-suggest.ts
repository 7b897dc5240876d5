/**
 * What a command says for a flag it does not know: "unknown flag --prot; did you mean --port?"
 * instead of Node's raw parseArgs message (which names `allowPositionals` and `--`, parser
 * words a user never typed). Pure: the caller prints it.
 */

/** Edit distance (insert, delete, substitute, swap two neighbours), for short flag names. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/**
 * The known flag closest to `given` (names without dashes): within a third of its length in
 * edits (at least one), or the one flag it is a prefix of. Undefined when none is close.
 */
export function closestFlag(given: string, known: readonly string[]): string | undefined {
  const name = given.replace(/^-+/, '').split('=')[0]!;
  let best: { flag: string; distance: number } | undefined;
  for (const flag of known) {
    const distance = editDistance(name, flag);
    if (distance <= Math.max(1, Math.floor(flag.length / 3)) && (!best || distance < best.distance))
      best = { flag, distance };
  }
  if (best) return best.flag;
  const prefixed = known.filter((flag) => name.length >= 2 && flag.startsWith(name));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * The message for a parseArgs error (`code` ERR_PARSE_ARGS_*), naming the command: an unknown
 * flag with the closest known one, a flag missing its value, a value given to a switch, a value
 * starting with a dash given after a space.
 * Undefined for any other error (a bug, rethrown by the caller).
 */
export function flagError(
  command: string,
  error: unknown,
  known: readonly string[],
): string | undefined {
  const code = String((error as { code?: unknown }).code);
  if (!code.startsWith('ERR_PARSE_ARGS')) return undefined;
  const message = (error as Error).message;
  const option = /'(-{1,2}[^'\s]+)[^']*'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) {
    const near = closestFlag(option, known);
    return `rotscope ${command}: unknown flag ${option}${near ? `; did you mean --${near}?` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    // `--notify-hours -1`: a value starting with a dash reads as a flag
    if (/ambiguous/.test(message))
      return `rotscope ${command}: a value of ${option} that starts with a dash is written ${option}=VALUE`;
    const takesValue = /argument missing/.test(message);
    return takesValue
      ? `rotscope ${command}: ${option} needs a value (${option} VALUE)`
      : `rotscope ${command}: ${option} takes no value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `rotscope ${command}: unexpected argument ${/'([^']*)'/.exec(message)?.[1] ?? ''}`;
  return `rotscope ${command}: ${message}`;
}
