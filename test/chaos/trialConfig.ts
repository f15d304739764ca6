/**
 * What a chaos child is told about its trial (passed as JSON in `CHAOS_TRIAL`; the kill point in
 * `CHAOS_KILL_AT`), and how parent and child open the trial's store.
 */
import { FileStore, type Store } from '@baton/core';
import type { CheckpointFrequency, CheckpointKeep } from '@baton/handoff';
import { MongoStore } from '@baton/store-mongo';

/** Where a trial keeps its conversation. */
export type TrialStore = { kind: 'file'; directory: string } | { kind: 'mongo'; url: string; dbName: string };

/** The trial a child works on. */
export interface TrialConfig {
  store: TrialStore;
  every: CheckpointFrequency;
  keep: CheckpointKeep;
  sessionId: string;
  /** The side log every child of the trial appends to. */
  sideLog: string;
  /** When set, the child appends the label of each kill point it passes here. */
  labelsFile?: string;
  /** When set, some kill points sleep a few ms (seeded). */
  delaySeed?: number;
  /** The desk's `historyWindow({ messages })`, when the campaign runs with one. */
  window?: number;
}

/**
 * Opens a new store object on the trial's data (as a fresh process would); a MongoStore whose
 * indexes cannot be created is closed again before the error is thrown.
 * @example
 * ```ts
 * const store = await openTrialStore({ kind: 'file', directory: '/tmp/trial-1' });
 * ```
 */
export async function openTrialStore(store: TrialStore): Promise<Store> {
  if (store.kind === 'file') return new FileStore({ directory: store.directory });
  const mongo = new MongoStore(
    { url: store.url, clientOptions: { serverSelectionTimeoutMS: 15_000 } },
    { dbName: store.dbName },
  );
  try {
    await mongo.init();
  } catch (error) {
    await mongo.close().catch(() => {});
    throw error;
  }
  return mongo;
}
