/**
 * Summarizes a V8 .cpuprofile (BENCH_CPU_PROF of bench/ingest.ts): self time by area of the code
 * (decode, normalize, store row building, pg driver, kysely, HTTP, evaluator, GC, idle) and the
 * top functions. `npx tsx bench/cpu-profile.ts FILE.cpuprofile`.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const AREAS: Array<[string, RegExp]> = [
  ['decode (otlp/, protobufjs)', /\/src\/otlp\/|protobufjs|@protobufjs/],
  ['normalize (ingest/)', /\/src\/ingest\//],
  ['store: row building + SQL text (store/, receiver/)', /\/src\/store\/|\/src\/receiver\//],
  ['pg driver (pg, pg-protocol, pg-copy-streams)', /node_modules\/pg|pg-protocol|pg-copy-streams/],
  ['kysely', /kysely/],
  ['evaluator + detectors', /\/src\/evaluator\/|\/src\/detectors\//],
  ['HTTP (fastify, api/)', /fastify|find-my-way|light-my-request|avvio|\/src\/api\//],
  ['zod', /zod/],
  ['node internals', /^node:|^internal\//],
];

export function summarize(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
  );
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += us;
    const area =
      url === ''
        ? functionName || '(anonymous)'
        : (AREAS.find(([, re]) => re.test(url))?.[0] ?? 'other JS');
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${url.replace(/.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const busy = total - (areas.get('(idle)') ?? 0);
  const line = ([name, us]: [string, number]) =>
    `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`;
  return [
    `total ${(total / 1000).toFixed(0)} ms, busy (not idle) ${(busy / 1000).toFixed(0)} ms; % of busy`,
    ...[...areas].sort((a, b) => b[1] - a[1]).map(line),
    '',
    `top ${top} functions (self time)`,
    ...[...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(line),
  ].join('\n');
}

if (process.argv[2]) console.log(summarize(process.argv[2], Number(process.argv[3] ?? 25)));
