/** InMemoryStore keeps its assets bounded: each by maxAssetBytes, all together by maxAssetBytesTotal, and evicted with their session. */
import { describe, expect, it } from 'vitest';
import { AssetTooLargeError, ConfigurationError, InMemoryStore } from '../src/index.js';

const bytes = (size: number) => new Uint8Array(size).fill(1);

describe('InMemoryStore asset limits', () => {
  it('refuses an upload past the room left under maxAssetBytesTotal, and takes it once room is freed', async () => {
    const store = new InMemoryStore({ maxAssetBytes: 600, maxAssetBytesTotal: 1000 });
    await store.createSession({ id: 'a' });
    await store.createSession({ id: 'b' });
    const first = await store.putAsset('a', {
      name: 'one.bin',
      contentType: 'application/octet-stream',
      bytes: bytes(600),
    });
    const refused = await store
      .putAsset('b', { name: 'two.bin', contentType: 'application/octet-stream', bytes: bytes(500) })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AssetTooLargeError);
    expect((refused as AssetTooLargeError).limit).toBe(400);
    expect((refused as AssetTooLargeError).message).toContain('maxAssetBytesTotal');
    expect(await store.listAssets('b')).toEqual([]);
    await store.deleteAsset('a', first.id);
    expect(
      (await store.putAsset('b', { name: 'two.bin', contentType: 'application/octet-stream', bytes: bytes(500) })).size,
    ).toBe(500);
  });

  it('drops the assets of a session it evicts to make room', async () => {
    const store = new InMemoryStore({ maxSessions: 1, maxAssetBytesTotal: 1000 });
    const old = await store.createSession({ id: 'old' });
    await store.putAsset('old', { name: 'a.bin', contentType: 'application/octet-stream', bytes: bytes(900) });
    await store.updateSession('old', { status: 'closed' }, { expectedVersion: old.version });
    await store.createSession({ id: 'new' }); // evicts the closed session, its asset with it
    expect(
      (await store.putAsset('new', { name: 'b.bin', contentType: 'application/octet-stream', bytes: bytes(900) })).size,
    ).toBe(900);
  });

  it('refuses asset limits that are not positive whole numbers with ConfigurationError', () => {
    expect(() => new InMemoryStore({ maxAssetBytes: 0 })).toThrow(ConfigurationError);
    expect(() => new InMemoryStore({ maxAssetBytesTotal: 1.5 })).toThrow(ConfigurationError);
  });
});
