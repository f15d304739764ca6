/**
 * vitest globalSetup of `@baton/temporal`: builds the Temporal CLI once per machine when it is
 * missing (announced on stderr, see test/support/temporalBinary.ts), starts one dev server for the
 * run and provides its address as `inject('temporalAddress')`. Tests that restart the server start
 * their own with `startTemporalServer()`.
 */
import type { TestProject } from 'vitest/node';
import { startTemporalServer } from './temporalServer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `127.0.0.1:<port>` of the run's Temporal dev server. */
    temporalAddress: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTemporalServer();
  project.provide('temporalAddress', server.address);
  return () => server.close();
}
