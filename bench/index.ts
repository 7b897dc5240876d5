/** `npm run bench`: every benchmark, reported as ratios against baselines measured in the same run. */
import { benchIngest } from './ingest.ts';

const which = process.argv.slice(2);
const want = (name: string) => which.length === 0 || which.includes(name);

if (want('ingest')) {
  await benchIngest((run) => console.log(JSON.stringify({ bench: 'ingest', ...run })));
}
if (want('evaluation-cost')) {
  const { benchEvaluationCostRuns } = await import('./evaluation-cost.ts');
  await benchEvaluationCostRuns((run) =>
    console.log(JSON.stringify({ bench: 'evaluation-cost', ...run })),
  );
}
if (want('stages')) {
  const { benchStages } = await import('./stages.ts');
  console.log(JSON.stringify({ bench: 'stages', ...(await benchStages()) }));
}
if (want('prune')) {
  const { benchPrune } = await import('./prune.ts');
  console.log(JSON.stringify({ bench: 'prune', ...(await benchPrune()) }));
}
if (want('migration')) {
  const { benchMigration } = await import('./migration.ts');
  console.log(JSON.stringify({ bench: 'migration', ...(await benchMigration()) }));
}
if (want('latency')) {
  const { benchLatency } = await import('./latency.ts');
  console.log(JSON.stringify({ bench: 'latency', ...(await benchLatency()) }));
}
if (want('statusline')) {
  const { benchStatusline } = await import('./statusline.ts');
  console.log(JSON.stringify({ bench: 'statusline', ...(await benchStatusline()) }));
}
if (want('guard')) {
  const { benchGuard } = await import('./guard.ts');
  console.log(JSON.stringify({ bench: 'guard', ...(await benchGuard()) }));
}
if (want('evaluator')) {
  const { benchEvaluator } = await import('./evaluator.ts');
  console.log(JSON.stringify({ bench: 'evaluator', ...(await benchEvaluator()) }));
}
if (want('startup')) {
  const { benchStartup } = await import('./startup.ts');
  console.log(JSON.stringify({ bench: 'startup', ...(await benchStartup()) }));
}
if (want('soak')) {
  const { benchSoak } = await import('./soak.ts');
  console.log(JSON.stringify({ bench: 'soak', ...(await benchSoak()) }));
}
if (want('gzip32')) {
  const { benchGzip32 } = await import('./soak.ts');
  for (const run of await benchGzip32()) console.log(JSON.stringify({ bench: 'gzip32', ...run }));
}
if (want('big-batch')) {
  const { benchBigBatch } = await import('./big-batch.ts');
  await benchBigBatch((run) => console.log(JSON.stringify({ bench: 'big-batch', ...run })));
}
if (want('console')) {
  const { benchConsole } = await import('./console.ts');
  console.log(JSON.stringify({ bench: 'console', ...(await benchConsole()) }));
}
if (want('import-memory')) {
  const { benchImportMemory } = await import('./import-memory.ts');
  console.log(JSON.stringify({ bench: 'import-memory', ...(await benchImportMemory()) }));
}
if (want('shared-conversations')) {
  const { benchSharedConversations } = await import('./shared-conversations.ts');
  console.log(
    JSON.stringify({ bench: 'shared-conversations', ...(await benchSharedConversations()) }),
  );
}
