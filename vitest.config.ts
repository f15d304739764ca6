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
const mongoGlobalSetup = { globalSetup: [fileURLToPath(new URL('./test/support/mongoGlobalSetup.ts', import.meta.url))] };

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summaryLineReporter.ts'],
    projects: [
      project('@baton/core', './packages/core'),
      project('@baton/handoff', './packages/handoff'),
      project('@baton/ai-sdk', './packages/ai-sdk'),
      project('@baton/memory', './packages/memory'),
      project('@baton/server', './packages/server', mongoGlobalSetup),
      project('@baton/store-mongo', './packages/store-mongo', mongoGlobalSetup),
      project('@baton/test', './test', mongoGlobalSetup),
      project('@baton/example-support-desk', './examples/support-desk', mongoGlobalSetup),
      project('@baton/example-quickstart', './examples/quickstart'),
    ],
  },
});
