import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { batonAliases } from './vitest.shared.ts';

/**
 * `pnpm test:llm`: Baton's model clients against a real OpenAI-compatible server (llama-cpp-python
 * serving SmolLM2-135M on 127.0.0.1), kept out of `pnpm test` because its first run builds llama.cpp.
 */
export default defineConfig({
  resolve: { alias: batonAliases },
  test: {
    name: 'llm',
    root: './test/llm',
    include: ['**/*.test.ts'],
    globalSetup: [fileURLToPath(new URL('./test/support/llamaGlobalSetup.ts', import.meta.url))],
    reporters: ['default', fileURLToPath(new URL('./test/support/summaryLineReporter.ts', import.meta.url))],
    // One server answers one request at a time; a 2-core machine shared with other work is slow.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
