/**
 * Child process of mongoStore.deadClaimant.test.ts: a writer that claims a version and then stops
 * before its update, waiting to be killed with SIGKILL. It runs MongoStore's real update path; the
 * only change is that the claim insert, once it has landed, prints `claimed` and never returns.
 * Usage: claimChild.ts <url> <dbName> <sessionId> <expectedVersion>
 */
import { MongoStore } from '../../src/index.js';

const [url, dbName, sessionId, expected] = process.argv.slice(2);
if (url === undefined || dbName === undefined || sessionId === undefined || expected === undefined) {
  throw new Error('usage: claimChild.ts <url> <dbName> <sessionId> <expectedVersion>');
}
const store = new MongoStore({ url }, { dbName, versionClaims: true });
await store.init();
const claims = store.collections.versionClaims;
const insertOne = claims.insertOne.bind(claims);
claims.insertOne = (async (...args: Parameters<typeof insertOne>) => {
  await insertOne(...args);
  process.stdout.write('claimed\n');
  setInterval(() => {}, 60_000); // keep the process alive until the parent kills it
  return new Promise<never>(() => {});
}) as typeof claims.insertOne;
await store.updateSession(
  sessionId,
  { state: { answer: 'from the killed writer' }, metadata: { writer: 'child' } },
  { expectedVersion: Number(expected) },
);
process.stdout.write('updated\n'); // never reached
