/** Reads rotscope's finding counters from a Prometheus text exposition (GET /metrics). */

/** The finding counters, `name{labels}` → value (labels as prom-client prints them). */
export function findingCounters(text: string): Record<string, number> {
  const counters: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(rotscope_findings_(?:created|escalated)_total\{[^}]*\}) (\S+)$/.exec(line);
    if (match) counters[match[1]!] = Number(match[2]);
  }
  return counters;
}

/** GET /metrics of a server and its finding counters. */
export async function scrapeFindingCounters(baseUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return findingCounters(await response.text());
}
