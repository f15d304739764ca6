/** The store a replica (and the test that checks it) opens from the replicas' env: a FileStore or a MongoStore. */
import { FileStore, type Store } from '@baton/core';

/**
 * Opens the store named by `env`: `REPLICA_MONGO_URL` and `REPLICA_MONGO_DB` for a MongoStore, else
 * `REPLICA_STORE_DIR` (and `REPLICA_LOCK_STALE_MS`, its session locks' `lockStaleMs`) for a FileStore. MongoStore is imported by path: @baton/server does not depend on
 * @baton/store-mongo.
 */
export async function openReplicaStore(env: Record<string, string | undefined>): Promise<Store> {
  const mongoUrl = env.REPLICA_MONGO_URL;
  if (mongoUrl === undefined) {
    const lockStaleMs = env.REPLICA_LOCK_STALE_MS;
    return new FileStore({
      directory: env.REPLICA_STORE_DIR!,
      ...(lockStaleMs === undefined ? {} : { lockStaleMs: Number(lockStaleMs) }),
    });
  }
  const mongo = (await import(new URL('../../../store-mongo/src/index.ts', import.meta.url).href)) as {
    MongoStore: new (connection: { url: string }, options: { dbName: string }) => Store;
  };
  return new mongo.MongoStore({ url: mongoUrl }, { dbName: env.REPLICA_MONGO_DB! });
}
