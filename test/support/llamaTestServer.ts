import { inject } from 'vitest';

/** Where the run's llama-cpp-python server listens (provided by llamaGlobalSetup.ts). */
export interface LlamaTestServer {
  /** e.g. `http://127.0.0.1:41234/v1`. */
  baseURL: string;
  /** The model name to send. */
  model: string;
  /** The server's context window in tokens. */
  contextTokens: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The llama-cpp-python server of this test run (started by llamaGlobalSetup.ts). */
    llamaServer: LlamaTestServer;
  }
}

/**
 * The llama-cpp-python server the globalSetup started.
 * @throws {Error} when the project has no llama globalSetup configured
 */
export function llamaTestServer(): LlamaTestServer {
  const server = inject('llamaServer');
  if (server === undefined || typeof server.baseURL !== 'string') {
    throw new Error(
      "No llama server was provided: run these tests with `pnpm test:llm` (vitest.llm.config.ts's globalSetup).",
    );
  }
  return server;
}
