import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, InMemoryStore } from '@baton/core';
import { damageFileCheckpoint } from './conformance/checkpointDamage.js';
import { describeStoreConformance } from './conformance/storeConformance.js';

describeStoreConformance('InMemoryStore', async () => ({ store: new InMemoryStore() }));

describeStoreConformance(
  'FileStore',
  async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-filestore-conformance-'));
    return {
      store: new FileStore({ directory }),
      cleanup: () => rm(directory, { recursive: true, force: true }),
      damageCheckpoint: damageFileCheckpoint(directory),
    };
  },
  { damageable: true },
);
