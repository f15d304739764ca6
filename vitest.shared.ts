import { fileURLToPath } from 'node:url';

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * Aliases that point every `@baton/*` import at the package's `src`, so tests never need a build.
 * More specific subpaths come first.
 */
export const batonAliases = [
  { find: /^@baton\/core\/openai$/, replacement: root('./packages/core/src/openai/index.ts') },
  { find: /^@baton\/core\/mcp$/, replacement: root('./packages/core/src/mcp/index.ts') },
  { find: /^@baton\/core\/testing$/, replacement: root('./packages/core/src/testing/index.ts') },
  { find: /^@baton\/core\/store-kit$/, replacement: root('./packages/core/src/store-kit/index.ts') },
  { find: /^@baton\/core$/, replacement: root('./packages/core/src/index.ts') },
  { find: /^@baton\/a2a$/, replacement: root('./packages/a2a/src/index.ts') },
  { find: /^@baton\/ai-sdk$/, replacement: root('./packages/ai-sdk/src/index.ts') },
  { find: /^@baton\/cli$/, replacement: root('./packages/cli/src/index.ts') },
  { find: /^@baton\/handoff$/, replacement: root('./packages/handoff/src/index.ts') },
  { find: /^@baton\/memory$/, replacement: root('./packages/memory/src/index.ts') },
  { find: /^@baton\/server\/ag-ui$/, replacement: root('./packages/server/src/agui/index.ts') },
  { find: /^@baton\/server\/mcp$/, replacement: root('./packages/server/src/mcp/index.ts') },
  { find: /^@baton\/server\/node$/, replacement: root('./packages/server/src/node.ts') },
  { find: /^@baton\/server$/, replacement: root('./packages/server/src/index.ts') },
  { find: /^@baton\/temporal$/, replacement: root('./packages/temporal/src/index.ts') },
  { find: /^@baton\/store-mongo$/, replacement: root('./packages/store-mongo/src/index.ts') },
];
