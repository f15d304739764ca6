/**
 * The store conformance suite: the behaviour every {@link Store} must show, run against any
 * implementation. It reaches into no internals and gives every test its own session, tenant and
 * user ids, so several runs may share one database.
 *
 * @example
 * ```ts
 * import { InMemoryStore } from '@baton/core';
 * import { describeStoreConformance } from './conformance/storeConformance.js';
 * describeStoreConformance('InMemoryStore', async () => ({ store: new InMemoryStore() }));
 * ```
 */
import { DEFAULT_MAX_ASSET_BYTES, type Store } from '@baton/core';
import { afterAll, beforeAll, describe } from 'vitest';
import { describeAssetConformance } from './assetConformance.js';
import { describeBranchLogConformance } from './branchLogConformance.js';
import { describeBatchConformance } from './batchConformance.js';
import { describeBranchConformance } from './branchConformance.js';
import { describeCheckpointConformance } from './checkpointConformance.js';
import type { DamageCheckpoint } from './checkpointDamage.js';
import { describeCheckpointDamageConformance } from './checkpointDamageConformance.js';
import { describeCheckpointDeleteConformance } from './checkpointDeleteConformance.js';
import type { ConformanceContext } from './conformanceContext.js';
import { describeEpisodeConformance } from './episodeConformance.js';
import { describeErasureConformance } from './erasureConformance.js';
import { describeMessageConformance } from './messageConformance.js';
import { describeSessionConformance } from './sessionConformance.js';
import { describeTenancyConformance } from './tenancyConformance.js';
import { describeValidationConformance } from './validationConformance.js';

/** What a conformance run's factory returns: the store, and how to dispose of what it made. */
export interface ConformanceStore {
  store: Store;
  /** Runs after the suite, after `store.close()` (e.g. removes a temp dir, stops a server). */
  cleanup?: () => Promise<void>;
  /** Damages a stored checkpoint in place; required when the run is declared `damageable`. */
  damageCheckpoint?: DamageCheckpoint;
  /** The `maxAssetBytes` the store was created with (default: the stores' default, 25 MiB); keep it small, the asset tests upload it. */
  maxAssetBytes?: number;
}

/** What a store run declares about its store. */
export interface ConformanceOptions {
  /**
   * The store keeps documents a disk fault or a hand edit can damage (FileStore, MongoStore): the
   * suite then checks that a damaged checkpoint blocks neither older checkpoints, nor the manifest,
   * nor pruning. The factory must return `damageCheckpoint`.
   */
  damageable?: boolean;
}

/**
 * Registers the conformance suite (vitest `describe`/`it`) for one store implementation.
 *
 * @param name shown in the test names, e.g. `'FileStore'`
 * @param createStore called once before the suite; the store is closed (and `cleanup` run) after it
 * @param options what the store supports beyond the contract's minimum (see {@link ConformanceOptions})
 */
export function describeStoreConformance(
  name: string,
  createStore: () => Promise<ConformanceStore>,
  options: ConformanceOptions = {},
): void {
  describe(`${name} store conformance`, () => {
    let created: ConformanceStore | undefined;
    const context: ConformanceContext = {
      get store(): Store {
        if (created === undefined) throw new Error(`The ${name} store was not created; see the beforeAll error.`);
        return created.store;
      },
      get damageCheckpoint(): DamageCheckpoint | undefined {
        return created?.damageCheckpoint;
      },
      get maxAssetBytes(): number {
        return created?.maxAssetBytes ?? DEFAULT_MAX_ASSET_BYTES;
      },
    };

    beforeAll(async () => {
      created = await createStore();
    });

    afterAll(async () => {
      if (created === undefined) return;
      await created.store.close();
      await created.cleanup?.();
    });

    describeSessionConformance(context);
    describeMessageConformance(context);
    describeBranchConformance(context);
    describeCheckpointConformance(context);
    describeCheckpointDeleteConformance(context);
    describeBatchConformance(context);
    if (options.damageable) describeCheckpointDamageConformance(context);
    describeEpisodeConformance(context);
    describeTenancyConformance(context);
    describeErasureConformance(context);
    describeValidationConformance(context);
    describeAssetConformance(context);
    describeBranchLogConformance(context);
  });
}
