/**
 * vitest globalSetup of the projects that need MongoDB (`@baton/store-mongo`, `@baton/test`): starts
 * one FerretDB for the run (or uses `MONGODB_URL` when set) and provides its url to the tests as
 * `inject('mongoUrl')` (see `mongoTestUrl()`). It never skips: when no server can start, the run
 * fails here with the reason.
 */
import type { TestProject } from 'vitest/node';
import { type MongoServer, startMongoServer } from './mongoServer.js';

// Brings in the `ProvidedContext.mongoUrl` declaration (type only; no runtime import).
export type { mongoTestUrl } from './mongoTestUrl.js';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const external = process.env.MONGODB_URL;
  if (external !== undefined && external !== '') {
    project.provide('mongoUrl', external);
    return undefined;
  }
  let server: MongoServer;
  try {
    server = await startMongoServer();
  } catch (cause) {
    throw new Error(
      `The MongoDB tests need a server and none could start: ${(cause as Error).message}\nSet MONGODB_URL to a running MongoDB, or make Go ≥ 1.24 available so FerretDB can be built (once, about two minutes).`,
      { cause },
    );
  }
  project.provide('mongoUrl', server.url);
  return () => server.close();
}
