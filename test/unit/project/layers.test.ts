/**
 * The layer rule of eslint.config.js holds for every way a module can be reached: a static
 * import, `export ... from`, a dynamic `import()`, and config.ts's own `./` imports.
 */
import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The layer messages ESLint gives `code` as if it were the file at `file` (relative to the root). */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

describe('the layer lint', { timeout: 60_000 }, () => {
  it('refuses an import up a layer or into a sibling, static, re-exported or dynamic', async () => {
    expect(
      await layerErrors(
        'src/store/probe.ts',
        "import { buildApp } from '../api/app.ts';\nexport { buildApp };\n",
      ),
    ).toEqual([expect.stringContaining('src/store/ (layer 1) may not import')]);
    expect(
      await layerErrors(
        'src/store/probe.ts',
        "export { normalizeSpans } from '../ingest/spans.ts';\n",
      ),
    ).toEqual([expect.stringContaining('src/store/ (layer 1) may not import')]);
    expect(
      await layerErrors('src/cli/probe.ts', "export const load = () => import('../main.ts');\n"),
    ).toEqual([expect.stringContaining('only the composition root')]);
    expect(
      await layerErrors(
        'src/detectors/probe.ts',
        "export const load = () => import('../evaluator/loop.ts');\n",
      ),
    ).toEqual([expect.stringContaining('src/detectors/ (layer 1) may not import')]);
  });

  it('keeps the read side (reading/) above the store and below the API', async () => {
    expect(
      await layerErrors('src/store/probe.ts', "export { loadStrip } from '../reading/strip.ts';\n"),
    ).toEqual([expect.stringContaining('src/store/ (layer 1) may not import')]);
    expect(
      await layerErrors('src/reading/probe.ts', "export { buildApp } from '../api/app.ts';\n"),
    ).toEqual([expect.stringContaining('src/reading/ (layer 2) may not import')]);
    expect(
      await layerErrors(
        'src/reading/probe.ts',
        "export { DETECTOR_NEEDS } from '../detectors/registry.ts';\nexport { getFinding } from '../store/findings.ts';\n",
      ),
    ).toEqual([]);
  });

  it('judges config.ts (layer 0) by its ./ imports', async () => {
    expect(
      await layerErrors(
        'src/config.ts',
        "import { openStore } from './store/db.ts';\nexport { openStore };\n",
      ),
    ).toEqual([expect.stringContaining('src/model/ (layer 0) may not import')]);
  });

  it('lets an import down a layer through, static or dynamic', async () => {
    expect(
      await layerErrors(
        'src/cli/probe.ts',
        "import { migrate } from '../store/migrate.ts';\nexport const load = () => import('../config.ts');\nexport { migrate };\n",
      ),
    ).toEqual([]);
    expect(
      await layerErrors('src/entry.ts', "export const load = () => import('./main.ts');\n"),
    ).toEqual([]);
  });
});
