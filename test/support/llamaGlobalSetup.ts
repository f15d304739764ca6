/**
 * vitest globalSetup of the LLM tests (`pnpm test:llm`): builds llama-cpp-python once (announced on
 * stderr; see llamaServer.ts), starts one `llama_cpp.server` for the run and provides its address to the
 * tests as `inject('llamaServer')` (see `llamaTestServer()`). It never skips: when no server can start,
 * the run fails here with the reason.
 */
import type { TestProject } from 'vitest/node';
import { startLlamaServer } from './llamaServer.js';

// Brings in the `ProvidedContext.llamaServer` declaration (type only; no runtime import).
export type { llamaTestServer } from './llamaTestServer.js';

/** The context window the tests' server runs with: small, so that one long message overflows it. */
export const LLAMA_TEST_CONTEXT_TOKENS = 512;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startLlamaServer({ contextTokens: LLAMA_TEST_CONTEXT_TOKENS });
  project.provide('llamaServer', { baseURL: server.baseURL, model: server.model, contextTokens: server.contextTokens });
  return () => server.close();
}
