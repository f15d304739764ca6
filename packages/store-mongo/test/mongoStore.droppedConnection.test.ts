/**
 * Connections the server drops between commands, through a TCP proxy on 127.0.0.1 that closes
 * every connection the driver holds just before the next store call. The MongoDB Node driver has
 * two ways of getting this wrong, both seen here:
 * - it rejects with Node's own socket error (`EPIPE`, "This socket has been ended by the other
 *   party") instead of a `MongoNetworkError` when it writes to a socket whose server has just closed
 *   it (a CI run of the connection-loss test failed on it);
 * - or, when that socket is already being destroyed, it waits forever for a `drain` that never
 *   comes: the call never settles.
 * A store call must end either way with a StoreError, and a retried turn must store nothing twice.
 */
import net from 'node:net';
import { type Message, StoreError } from '@baton/core';
import { MongoError } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMessage } from '../../../test/conformance/fixtures.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { toStoreError, withStoreErrors } from '../src/collections/mongoErrors.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

/** A TCP proxy to the test server that can close every connection through it at once. */
interface DroppingProxy {
  url: string;
  /** Closes every open connection (both sides), as a server that goes away does. */
  dropAll(): number;
  close(): Promise<void>;
}

async function startDroppingProxy(target: URL): Promise<DroppingProxy> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    open.add(client);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.pipe(upstream).pipe(client);
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    dropAll: () => {
      const count = open.size;
      for (const socket of open) socket.destroy();
      return count;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A real `EPIPE`: a write to a socket after its peer closed it and the local side finished. */
function realEpipe(): Promise<Error> {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => {
      const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
      socket.on('error', (error) => {
        server.close();
        resolve(error);
      });
      socket.on('finish', () => socket.write('ping'));
      socket.resume();
    });
  });
}

describe('MongoStore dropped connections', () => {
  it('a raw Node socket error from the driver (EPIPE) becomes a StoreError that says the connection was lost', async () => {
    const epipe = await realEpipe();
    expect((epipe as NodeJS.ErrnoException).code).toBe('EPIPE');
    const failure = await withStoreErrors('save a checkpoint', () => Promise.reject(epipe)).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).message).toMatch(
      /^MongoStore could not save a checkpoint: the MongoDB server is unreachable or the connection was lost\..*EPIPE/,
    );
    expect((failure as StoreError).cause).toBe(epipe);
    // A driver error whose cause is such a socket error says the same.
    const wrapped = toStoreError('save a checkpoint', new MongoError('write failed', { cause: epipe }));
    expect((wrapped as StoreError).message).toMatch(
      /^MongoStore could not save a checkpoint: the MongoDB server is unreachable or the connection was lost\..*MongoError: write failed$/,
    );
    // Programming errors still pass through unchanged.
    const bug = new TypeError('x is not a function');
    expect(toStoreError('save a checkpoint', bug)).toBe(bug);
  });

  it('a call that never settles fails with a StoreError at the deadline', async () => {
    const failure = await withStoreErrors('read messages', () => new Promise<never>(() => undefined), 50).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).message).toBe(
      'MongoStore could not read messages: no answer within 50 ms (operationTimeoutMS): the MongoDB server is unreachable or the connection was lost. Check the server and the url; the call may be retried (writes are idempotent).',
    );
  });

  describe('through a proxy that drops every connection before each append', () => {
    let proxy: DroppingProxy;
    let test: TestMongoStore;

    beforeAll(async () => {
      proxy = await startDroppingProxy(new URL(mongoTestUrl()));
      test = await createTestMongoStore(
        'dropped',
        { serverSelectionTimeoutMS: 1_000, operationTimeoutMS: 1_500 },
        proxy.url,
      );
    });

    afterAll(async () => {
      await test?.store.close();
      await proxy?.close();
    });

    // About 15 s: a third of the appends hit a dead socket and wait for the 1.5 s deadline.
    it('every call settles, failures are StoreErrors, and the retried appends store each message once', {
      timeout: 120_000,
    }, async () => {
      const { store } = test;
      const session = await store.createSession({ id: `dropped-${Date.now()}` });
      const APPENDS = 24;
      const expected: Message[] = [];
      const outcomes = { stored: 0, lost: 0, deadline: 0 };
      for (let n = 1; n <= APPENDS; n += 1) {
        const message = makeMessage(n);
        expected.push(message);
        await store.readMessages(session.id, 'main');
        proxy.dropAll();
        // The dead socket's events arrive over the next few turns of the event loop; appending after
        // 0 to 5 of them meets each stage of its closing.
        for (let tick = 0; tick < n % 6; tick += 1) await new Promise((resolve) => setImmediate(resolve));
        for (let attempt = 1; ; attempt += 1) {
          try {
            await store.appendMessages(session.id, 'main', [message]);
            outcomes.stored += 1;
            break;
          } catch (error) {
            expect(error, `append ${n} attempt ${attempt} failed with ${String(error)}`).toBeInstanceOf(StoreError);
            expect((error as StoreError).message).toContain('unreachable or the connection was lost');
            if ((error as StoreError).message.includes('operationTimeoutMS')) outcomes.deadline += 1;
            else outcomes.lost += 1;
            expect(attempt, `append ${n} kept failing`).toBeLessThan(20);
          }
        }
      }
      console.log(`dropped connections: ${APPENDS} appends, outcomes of the attempts ${JSON.stringify(outcomes)}`);
      const read = await store.readMessages(session.id, 'main');
      expect(read).toEqual(expected);
      expect(await store.collections.messages.countDocuments({ sessionId: session.id })).toBe(APPENDS);
    });
  });
});
