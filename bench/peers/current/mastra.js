// Loaded by bench/peers/src/cli.ts so that Mastra resolves to this folder's current release.
export { Agent } from '@mastra/core/agent';
export { Mastra } from '@mastra/core/mastra';
export { InMemoryStore } from '@mastra/core/storage';
export { createTool } from '@mastra/core/tools';
export { Memory } from '@mastra/memory';
