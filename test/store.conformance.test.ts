import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, InMemoryStore } from '@baton/core';
import { damageFileCheckpoint } from './conformance/checkpointDamage.js';
import { describeStoreConformance } from './conformance/storeConformance.js';

/** A small asset limit, so the asset tests upload little. */
const maxAssetBytes = 64 * 1024;

describeStoreConformance('InMemoryStore', async () => ({ store: new InMemoryStore({ maxAssetBytes }), maxAssetBytes }));

describeStoreConformance(
  'FileStore',
  async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-filestore-conformance-'));
    return {
      store: new FileStore({ directory, maxAssetBytes }),
      maxAssetBytes,
      cleanup: () => rm(directory, { recursive: true, force: true }),
      damageCheckpoint: damageFileCheckpoint(directory),
    };
  },
  { damageable: true },
);
