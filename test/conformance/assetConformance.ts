import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  type AssetRef,
  type AssetStore,
  AssetTooLargeError,
  InvalidIdError,
  InvalidInputError,
  isIsoTimestamp,
  isValidId,
  NotFoundError,
  type Store,
  type TenantScope,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { ConformanceContext } from './conformanceContext.js';
import { BAD_IDS, uniqueId } from './fixtures.js';

/** Bytes 0..255 repeated to `size`. */
function bytesOf(size: number, seed = 0): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i + seed) % 256);
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The store as a store with assets: the conformance suite runs only on stores that have them. */
function assetStore(context: ConformanceContext): Store & AssetStore {
  const { store } = context;
  for (const method of ['putAsset', 'getAsset', 'listAssets', 'deleteAsset'] as const) {
    if (typeof store[method] !== 'function')
      throw new Error(`The ${store.kind} store has no ${method}: it does not keep assets.`);
  }
  return store as Store & AssetStore;
}

async function ownedSession(store: Store, owner: TenantScope & { userId?: string } = {}) {
  const session = await store.createSession({ id: uniqueId('s'), ...owner });
  const scope: TenantScope = owner.tenantId === undefined ? {} : { tenantId: owner.tenantId };
  return { session, scope };
}

/**
 * Assets: files uploaded to a session, stored by reference, listed, deleted alone, with their
 * session and by `eraseUser`; ids, names, content types and sizes validated; tenants isolated.
 */
export function describeAssetConformance(context: ConformanceContext): void {
  describe('assets', () => {
    const limit = () => context.maxAssetBytes;

    it('stores bytes and gives back a reference with its size, SHA-256 and normalized content type', async () => {
      const store = assetStore(context);
      const { session, scope } = await ownedSession(store, { tenantId: uniqueId('t') });
      const bytes = bytesOf(3000);
      const ref = await store.putAsset(session.id, { name: 'receipt 12.png', contentType: 'Image/PNG', bytes }, scope);
      expect(isValidId(ref.id)).toBe(true);
      expect(isIsoTimestamp(ref.createdAt)).toBe(true);
      expect(ref).toEqual({
        id: ref.id,
        sessionId: session.id,
        name: 'receipt 12.png',
        contentType: 'image/png',
        size: 3000,
        sha256: sha256(bytes),
        createdAt: ref.createdAt,
      } satisfies AssetRef);
      const stored = await store.getAsset(session.id, ref.id, scope);
      expect(stored?.ref).toEqual(ref);
      expect(Buffer.from(stored!.bytes).equals(Buffer.from(bytes))).toBe(true);
      expect(await store.listAssets(session.id, scope)).toEqual([ref]);
    });

    it('stores a stream (a Node.js Readable, a web ReadableStream) chunk by chunk, and an empty file', async () => {
      const store = assetStore(context);
      const { session, scope } = await ownedSession(store);
      const parts = [bytesOf(1000, 1), bytesOf(7, 2), bytesOf(4096, 3)];
      const whole = Buffer.concat(parts);
      const fromNode = await store.putAsset(
        session.id,
        { name: 'scan.pdf', contentType: 'application/pdf', stream: Readable.from(parts) },
        scope,
      );
      const web = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      const fromWeb = await store.putAsset(
        session.id,
        { name: 'scan-2.pdf', contentType: 'application/pdf; charset=binary', stream: web },
        scope,
      );
      const empty = await store.putAsset(
        session.id,
        { name: 'empty.txt', contentType: 'text/plain', bytes: new Uint8Array(0) },
        scope,
      );
      for (const ref of [fromNode, fromWeb]) {
        expect(ref).toMatchObject({ size: whole.length, sha256: sha256(whole) });
        expect(Buffer.from((await store.getAsset(session.id, ref.id, scope))!.bytes).equals(whole)).toBe(true);
      }
      expect(fromWeb.contentType).toBe('application/pdf; charset=binary');
      expect(empty).toMatchObject({ size: 0, sha256: sha256(new Uint8Array(0)) });
      expect((await store.getAsset(session.id, empty.id, scope))!.bytes.byteLength).toBe(0);
      expect((await store.listAssets(session.id, scope)).map((r) => r.id)).toEqual([fromNode.id, fromWeb.id, empty.id]);
    });

    it('keeps what it stored when the caller changes its buffers, before or after', async () => {
      const store = assetStore(context);
      const { session } = await ownedSession(store);
      const bytes = bytesOf(64);
      const ref = await store.putAsset(session.id, { name: 'a.bin', contentType: 'application/octet-stream', bytes });
      bytes.fill(0);
      const first = await store.getAsset(session.id, ref.id);
      first!.bytes.fill(1);
      expect(Buffer.from((await store.getAsset(session.id, ref.id))!.bytes).equals(Buffer.from(bytesOf(64)))).toBe(
        true,
      );
    });

    it('deletes one asset, and says whether it existed', async () => {
      const store = assetStore(context);
      const { session, scope } = await ownedSession(store, { tenantId: uniqueId('t') });
      const gone = await store.putAsset(
        session.id,
        { name: 'a.txt', contentType: 'text/plain', bytes: bytesOf(10) },
        scope,
      );
      const kept = await store.putAsset(
        session.id,
        { name: 'b.txt', contentType: 'text/plain', bytes: bytesOf(11) },
        scope,
      );
      expect(await store.deleteAsset(session.id, gone.id, scope)).toBe(true);
      expect(await store.getAsset(session.id, gone.id, scope)).toBeUndefined();
      expect(await store.listAssets(session.id, scope)).toEqual([kept]);
      expect(await store.deleteAsset(session.id, gone.id, scope)).toBe(false);
      expect(await store.getAsset(session.id, 'no-such-asset', scope)).toBeUndefined();
    });

    it('accepts an asset of exactly maxAssetBytes and refuses a larger one (bytes or stream) with AssetTooLargeError, storing nothing', async () => {
      const store = assetStore(context);
      const { session } = await ownedSession(store);
      const max = limit();
      await expect(
        store.putAsset(session.id, {
          name: 'big.bin',
          contentType: 'application/octet-stream',
          bytes: bytesOf(max + 1),
        }),
      ).rejects.toMatchObject({
        name: 'AssetTooLargeError',
        code: 'ASSET_TOO_LARGE',
        limit: max,
      });
      const chunks = [bytesOf(Math.ceil(max / 2)), bytesOf(Math.ceil(max / 2)), bytesOf(1)];
      await expect(
        store.putAsset(session.id, {
          name: 'big.bin',
          contentType: 'application/octet-stream',
          stream: Readable.from(chunks),
        }),
      ).rejects.toBeInstanceOf(AssetTooLargeError);
      expect(await store.listAssets(session.id)).toEqual([]);
      const fits = await store.putAsset(session.id, {
        name: 'fits.bin',
        contentType: 'application/octet-stream',
        bytes: bytesOf(max),
      });
      expect(await store.listAssets(session.id)).toEqual([fits]);
    });

    it('refuses bad names, content types and content with InvalidInputError, storing nothing', async () => {
      const store = assetStore(context);
      const { session } = await ownedSession(store);
      const bytes = bytesOf(4);
      const bad = [
        { name: '', contentType: 'text/plain', bytes },
        { name: '../../etc/passwd', contentType: 'text/plain', bytes },
        { name: 'a\\b.txt', contentType: 'text/plain', bytes },
        { name: 'line\nbreak.txt', contentType: 'text/plain', bytes },
        { name: 'x'.repeat(256), contentType: 'text/plain', bytes },
        { name: 'a.txt', contentType: 'text', bytes },
        { name: 'a.txt', contentType: 'text/plain\r\nX-Evil: 1', bytes },
        { name: 'a.txt', contentType: '$where/x y', bytes },
        { name: 'a.txt', contentType: 'text/plain' },
        { name: 'a.txt', contentType: 'text/plain', bytes, stream: Readable.from([bytes]) },
        { name: 'a.txt', contentType: 'text/plain', bytes: 'not bytes' },
        { name: 'a.txt', contentType: 'text/plain', stream: Readable.from(['text, not bytes']) },
      ];
      for (const input of bad) {
        await expect(store.putAsset(session.id, input as never), JSON.stringify(input)).rejects.toBeInstanceOf(
          InvalidInputError,
        );
      }
      expect(await store.listAssets(session.id)).toEqual([]);
    });

    for (const badId of BAD_IDS) {
      it(`refuses the unsafe id ${JSON.stringify(badId)} as a session or asset id with InvalidIdError`, async () => {
        const store = assetStore(context);
        const { session } = await ownedSession(store);
        const input = { name: 'a.txt', contentType: 'text/plain', bytes: bytesOf(3) };
        await expect(store.putAsset(badId, input)).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.listAssets(badId)).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.getAsset(badId, 'a')).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.getAsset(session.id, badId)).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.deleteAsset(session.id, badId)).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.putAsset(session.id, input, { tenantId: badId })).rejects.toBeInstanceOf(InvalidIdError);
      });
    }

    it("never shows or changes another tenant's assets, nor another session's", async () => {
      const store = assetStore(context);
      const { session, scope } = await ownedSession(store, { tenantId: uniqueId('t') });
      const other = await ownedSession(store, scope);
      const ref = await store.putAsset(
        session.id,
        { name: 'a.txt', contentType: 'text/plain', bytes: bytesOf(5) },
        scope,
      );
      for (const intruder of [{ tenantId: uniqueId('t') }, {}]) {
        await expect(
          store.putAsset(session.id, { name: 'x.txt', contentType: 'text/plain', bytes: bytesOf(1) }, intruder),
        ).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.getAsset(session.id, ref.id, intruder)).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.listAssets(session.id, intruder)).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.deleteAsset(session.id, ref.id, intruder)).rejects.toBeInstanceOf(NotFoundError);
      }
      expect(await store.getAsset(other.session.id, ref.id, scope)).toBeUndefined();
      expect(await store.deleteAsset(other.session.id, ref.id, scope)).toBe(false);
      await expect(store.listAssets(uniqueId('s'), scope)).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        store.putAsset(uniqueId('s'), { name: 'x.txt', contentType: 'text/plain', bytes: bytesOf(1) }, scope),
      ).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.listAssets(session.id, scope)).toEqual([ref]);
    });

    it('deletes the assets with their session (deleteSession, deleteInactiveSessions): a new session of the same id has none', async () => {
      const store = assetStore(context);
      const tenantId = uniqueId('t');
      const deleted = await ownedSession(store, { tenantId });
      await store.putAsset(
        deleted.session.id,
        { name: 'a.txt', contentType: 'text/plain', bytes: bytesOf(5) },
        deleted.scope,
      );
      expect(await store.deleteSession(deleted.session.id, deleted.scope)).toBe(true);
      await expect(store.listAssets(deleted.session.id, deleted.scope)).rejects.toBeInstanceOf(NotFoundError);
      await store.createSession({ id: deleted.session.id, tenantId });
      expect(await store.listAssets(deleted.session.id, deleted.scope)).toEqual([]);

      const idleTenant = uniqueId('t');
      const idle = await ownedSession(store, { tenantId: idleTenant });
      const idleRef = await store.putAsset(
        idle.session.id,
        { name: 'b.txt', contentType: 'text/plain', bytes: bytesOf(6) },
        idle.scope,
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.deleteInactiveSessions({ idleFor: 1, tenantId: idleTenant })).toEqual([idle.session.id]);
      await store.createSession({ id: idle.session.id, tenantId: idleTenant });
      expect(await store.listAssets(idle.session.id, idle.scope)).toEqual([]);
      expect(await store.getAsset(idle.session.id, idleRef.id, idle.scope)).toBeUndefined();
    });

    it("erases a user's assets with their sessions and counts them, leaving other users' assets", async () => {
      const store = assetStore(context);
      const tenantId = uniqueId('t');
      const userId = uniqueId('u');
      const input = { name: 'a.txt', contentType: 'text/plain', bytes: bytesOf(8) };
      const first = await ownedSession(store, { tenantId, userId });
      const second = await ownedSession(store, { tenantId, userId });
      const other = await ownedSession(store, { tenantId, userId: uniqueId('u') });
      await store.putAsset(first.session.id, input, first.scope);
      await store.putAsset(first.session.id, input, first.scope);
      await store.putAsset(second.session.id, input, second.scope);
      const kept = await store.putAsset(other.session.id, input, other.scope);
      expect(await store.eraseUser({ tenantId, userId })).toEqual({
        sessions: 2,
        branches: 2,
        messages: 0,
        checkpoints: 0,
        episodes: 0,
        assets: 3,
      });
      for (const { session, scope } of [first, second]) {
        await store.createSession({ id: session.id, tenantId, userId });
        expect(await store.listAssets(session.id, scope)).toEqual([]);
      }
      expect(await store.listAssets(other.session.id, other.scope)).toEqual([kept]);
      expect(
        Buffer.from((await store.getAsset(other.session.id, kept.id, other.scope))!.bytes).equals(
          Buffer.from(input.bytes),
        ),
      ).toBe(true);
    });
  });
}
