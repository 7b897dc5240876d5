/**
 * Regenerates test/fixtures/producers/<name>.json: runs each producer against the fake LLM
 * and the capturing OTLP receiver (JSON encoding) and saves exactly what it exported.
 * Each producer runs in its own process (instrumentations patch modules process-wide):
 *
 *   npx tsx test/helpers/producers/capture-fixtures.ts            # all producers
 *   npx tsx test/helpers/producers/capture-fixtures.ts vercel-ai  # one
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startFakeLlm } from '../fake-llm.ts';
import { startCaptureCollector } from './capture.ts';
import { PRODUCERS, type ProducerName } from './index.ts';

const fixturesDir = fileURLToPath(new URL('../../fixtures/producers/', import.meta.url));

async function captureOne(name: ProducerName): Promise<void> {
  const producer = PRODUCERS[name];
  const llm = await startFakeLlm();
  const collector = await startCaptureCollector();
  try {
    await producer.run({ rotscopeUrl: collector.url, llmUrl: llm.url, protocol: 'json' });
    if (llm.pending() !== 0) throw new Error(`${name}: ${llm.pending()} scripted replies left`);
    const fixture = {
      producer: name,
      packages: producer.packages,
      generatedBy: `test/helpers/producers/capture-fixtures.ts ${name} (fake LLM, OTLP/HTTP JSON)`,
      traces: collector.traces,
      logs: collector.logs,
    };
    writeFileSync(`${fixturesDir}${name}.json`, `${JSON.stringify(fixture, null, 1)}\n`);
  } finally {
    await llm.close();
    await collector.close();
  }
}

const [only] = process.argv.slice(2);
if (only) {
  await captureOne(only as ProducerName);
} else {
  for (const name of Object.keys(PRODUCERS)) {
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name], {
      stdio: 'inherit',
    });
    console.log(`captured ${name}`);
  }
}
