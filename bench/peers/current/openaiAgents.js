// Loaded by bench/peers/src/cli.ts so that `@openai/agents` resolves to this folder's current release.
export * from '@openai/agents';
