/**
 * MongoStore's assets on a real server (FerretDB in the test run): stored in GridFS's format, so
 * the driver's own `GridFSBucket` lists and downloads them; read again by a new store; an upload
 * that fails midway leaves no asset and no chunks; changed chunks are refused on read; chunks an
 * interrupted upload left are removed with their session.
 */
import { createHash } from 'node:crypto';
import { DocumentCorruptError, StoreError } from '@baton/core';
import { GridFSBucket, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoStore } from '../src/index.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

/** Bytes 0..250 repeated to `size` (past one 255 KiB chunk for the sizes used here). */
function bytesOf(size: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => i % 251);
}

describe('MongoStore assets in GridFS format', () => {
  let test: TestMongoStore;
  let client: MongoClient;

  beforeAll(async () => {
    test = await createTestMongoStore('assets', { maxAssetBytes: 2 * 1024 * 1024 });
    client = new MongoClient(test.url, { serverSelectionTimeoutMS: 5_000 });
  });
  afterAll(async () => {
    await client.close();
    await test.cleanup();
  });

  it("is listed and downloaded by the driver's GridFSBucket, and read by a new store", async () => {
    const { store } = test;
    await store.createSession({ id: 'grid-1', tenantId: 'acme' });
    const bytes = bytesOf(600 * 1024); // three chunks: 255 KiB, 255 KiB, 90 KiB
    const ref = await store.putAsset(
      'grid-1',
      { name: 'scan.pdf', contentType: 'application/pdf', bytes },
      { tenantId: 'acme' },
    );

    const bucket = new GridFSBucket(client.db(test.dbName), { bucketName: 'baton_assets' });
    const [file] = await bucket.find({ _id: `grid-1/${ref.id}` } as never).toArray();
    expect(file).toMatchObject({ filename: 'scan.pdf', length: bytes.length, chunkSize: 255 * 1024, metadata: ref });
    const downloaded: Buffer[] = [];
    for await (const chunk of bucket.openDownloadStream(`grid-1/${ref.id}` as never)) downloaded.push(chunk as Buffer);
    const whole = Buffer.concat(downloaded);
    expect(createHash('sha256').update(whole).digest('hex')).toBe(ref.sha256);

    const fresh = new MongoStore({ url: test.url }, { dbName: test.dbName });
    try {
      expect(await fresh.listAssets('grid-1', { tenantId: 'acme' })).toEqual([ref]);
      expect(
        Buffer.from((await fresh.getAsset('grid-1', ref.id, { tenantId: 'acme' }))!.bytes).equals(Buffer.from(bytes)),
      ).toBe(true);
    } finally {
      await fresh.close();
    }
  });

  it('leaves no asset and no chunks when the upload stream fails midway', async () => {
    const { store } = test;
    await store.createSession({ id: 'grid-2' });
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield bytesOf(700 * 1024); // two whole chunks are stored before the failure
      throw new Error('the client went away');
    }
    await expect(
      store.putAsset('grid-2', { name: 'broken.bin', contentType: 'application/octet-stream', stream: failing() }),
    ).rejects.toThrow('the client went away');
    expect(await store.listAssets('grid-2')).toEqual([]);
    expect(await store.collections.assetChunks.countDocuments({ sessionId: 'grid-2' })).toBe(0);
  });

  it('refuses an asset whose chunks changed with DocumentCorruptError, and deletes chunks an interrupted upload left with the session', async () => {
    const { store } = test;
    await store.createSession({ id: 'grid-3' });
    const ref = await store.putAsset('grid-3', {
      name: 'a.bin',
      contentType: 'application/octet-stream',
      bytes: bytesOf(1000),
    });
    await store.collections.assetChunks.updateOne(
      { files_id: `grid-3/${ref.id}`, n: 0 },
      { $set: { data: Buffer.from(bytesOf(999)) } },
    );
    const error = await store.getAsset('grid-3', ref.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect(error).toBeInstanceOf(StoreError);

    // Chunks of an upload whose process died before its files document.
    await store.collections.assetChunks.insertOne({
      _id: 'grid-3/lost/0',
      files_id: 'grid-3/lost',
      n: 0,
      data: Buffer.from('x'),
      sessionId: 'grid-3',
    });
    expect(await store.listAssets('grid-3')).toEqual([ref]);
    expect(await store.deleteSession('grid-3')).toBe(true);
    expect(await store.collections.assetChunks.countDocuments({ sessionId: 'grid-3' })).toBe(0);
    expect(await store.collections.assetFiles.countDocuments({ sessionId: 'grid-3' })).toBe(0);
  });
});
