import tseslint from 'typescript-eslint';

/**
 * The layers of src/ (docs/architecture.md). An import may only point down: a file may import its
 * own folder and the layers below its own, never a sibling folder of its layer or anything above.
 *   0  model/, config.ts
 *   1  otlp/, ingest/, detectors/, store/, log/, secrets/
 *   2  receiver/, evaluator/, notifier/, reading/   (the pipeline stages: receiver/ is the OTLP receiving
 *                                                    below api/'s routes; reading/ is the read side)
 *   3  api/, cli/
 *   4  main.ts, loops.ts, bootstrap-token.ts, startup.ts   (the composition root)
 *   5  entry.ts                                            (the command's dispatcher)
 * Every import in src/ is relative and names the folder it reaches into, so the folder's name in
 * the specifier is enough to judge it. Static imports, `export ... from` and dynamic `import()`
 * are all judged; config.ts (layer 0) is judged by its `./` imports.
 */
const LAYERS = [
  ['model'],
  ['otlp', 'ingest', 'detectors', 'store', 'log', 'secrets'],
  ['receiver', 'evaluator', 'notifier', 'reading'],
  ['api', 'cli'],
];
const ROOT_FILES = ['main', 'loops', 'bootstrap-token', 'startup', 'entry'];

/** no-restricted-imports for the files of one folder: everything above it and its siblings. */
function boundaryFor(layer, folder) {
  const forbidden = LAYERS.slice(layer)
    .flat()
    .filter((other) => other !== folder);
  // from src/<folder>/ a specifier climbs with ../; from src/config.ts it starts with ./
  const up = folder === 'model' ? '(\\.\\./|\\./)+' : '(\\.\\./)+';
  const rules = [
    {
      regex: `^${up}(${forbidden.join('|')})/`,
      message: `layers point down: src/${folder}/ (layer ${layer}) may not import a sibling or a higher layer (docs/architecture.md)`,
    },
    {
      regex: `^${up}(${ROOT_FILES.join('|')})\\.ts$`,
      message:
        'only the composition root and entry.ts import main.ts, loops.ts, bootstrap-token.ts, startup.ts and entry.ts',
    },
  ];
  return {
    files: [`src/${folder}/**/*.ts`, ...(folder === 'model' ? ['src/config.ts'] : [])],
    rules: {
      'no-restricted-imports': ['error', { patterns: rules }],
      // the same rules for import('...'), which no-restricted-imports does not see
      'no-restricted-syntax': [
        'error',
        ...rules.map(({ regex, message }) => ({
          selector: `ImportExpression > Literal.source[value=/${regex.replace(/\//g, '\\/')}/]`,
          message,
        })),
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['node_modules', '.rotscope', 'dist', '.scratch', 'coverage', 'test-artifacts'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  ...LAYERS.flatMap((folders, layer) => folders.map((folder) => boundaryFor(layer, folder))),
);
