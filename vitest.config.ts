import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { batonAliases } from './vitest.shared.ts';

const project = (name: string, dir: string, extra: Record<string, unknown> = {}) => ({
  resolve: { alias: batonAliases },
  test: {
    name,
    root: dir,
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    benchmark: { include: ['**/*.bench.ts'] },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    ...extra,
  },
});

/** Starts one FerretDB per run (or uses MONGODB_URL) for the projects that talk to MongoDB. */
const mongoGlobalSetup = {
  globalSetup: [fileURLToPath(new URL('./test/support/mongoGlobalSetup.ts', import.meta.url))],
};

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summaryLineReporter.ts'],
    projects: [
      project('@baton/core', './packages/core'),
      project('@baton/handoff', './packages/handoff'),
      project('@baton/ai-sdk', './packages/ai-sdk'),
      project('@baton/memory', './packages/memory'),
      project('@baton/server', './packages/server', mongoGlobalSetup),
      project('@baton/a2a', './packages/a2a'),
      project('@baton/store-mongo', './packages/store-mongo', mongoGlobalSetup),
      project('@baton/temporal', './packages/temporal', {
        globalSetup: [
          ...mongoGlobalSetup.globalSetup,
          fileURLToPath(new URL('./packages/temporal/test/support/temporalGlobalSetup.ts', import.meta.url)),
        ],
        testTimeout: 120_000,
      }),
      // test/llm runs with `pnpm test:llm` (vitest.llm.config.ts): it needs the llama-cpp-python build.
      project('@baton/test', './test', {
        ...mongoGlobalSetup,
        exclude: ['**/node_modules/**', '**/dist/**', 'llm/**'],
      }),
      project('@baton/example-support-desk', './examples/support-desk', mongoGlobalSetup),
      project('@baton/support-desk-models', './examples/support-desk-models'),
      project('@baton/desk-eval', './research/desk-eval', mongoGlobalSetup),
      project('@baton/example-quickstart', './examples/quickstart'),
    ],
  },
});
