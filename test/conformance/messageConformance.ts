import { ConcurrencyError, InvalidInputError, type Message, NotFoundError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import {
  type ConformanceContext,
  createSessionWithMessages,
  createTestSession,
  ids,
  seqs,
} from './conformanceContext.js';
import { makeMessage, makeMessages, uniqueId } from './fixtures.js';

/** Messages: idempotent appends, conflicts, ranges. */
export function describeMessageConformance(context: ConformanceContext): void {
  describe('messages', () => {
    it('appends messages and reads them back whole, in seq order', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const first = makeMessages(1, 2);
      const toolTurn: Message[] = [
        makeMessage(3, {
          role: 'assistant',
          agent: 'billing',
          content: '',
          toolCalls: [{ id: 'call-1', name: 'lookup_order', arguments: '{"order":"1234"}' }],
          metadata: { model: 'gpt-test', usage: { inputTokens: 10 } },
        }),
        makeMessage(4, {
          role: 'tool',
          toolCallId: 'call-1',
          toolName: 'lookup_order',
          isError: false,
          content: '{"status":"charged twice"}',
        }),
      ];
      expect(await store.appendMessages(session.id, 'main', first)).toEqual({ inserted: 2 });
      expect(await store.appendMessages(session.id, 'main', toolTurn)).toEqual({ inserted: 2 });
      expect(await store.readMessages(session.id, 'main')).toEqual([...first, ...toolTurn]);
    });

    it('keeps what it stored whatever a caller does to the messages it wrote or read (a copy, or a frozen message that refuses the change)', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const written = makeMessage(1, {
        metadata: { tags: ['a'] },
        toolCalls: [{ id: 'call-1', name: 'lookup_order', arguments: '{}' }],
        role: 'assistant',
        content: '',
      });
      const expected = structuredClone(written);
      await store.appendMessages(session.id, 'main', [written]);
      written.content = 'changed after the write';
      (written.metadata!.tags as string[]).push('b');
      const [read] = await store.readMessages(session.id, 'main');
      const attempts = [
        () => {
          read!.content = 'changed after the read';
        },
        () => (read!.metadata!.tags as string[]).push('c'),
        () => {
          read!.toolCalls![0]!.name = 'other';
        },
      ];
      for (const attempt of attempts) {
        try {
          attempt();
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError); // a frozen message (InMemoryStore, FileStore)
        }
      }
      expect(await store.readMessages(session.id, 'main')).toEqual([expected]);
    });

    it('reads an empty branch as no messages', async () => {
      const session = await createTestSession(context.store);
      expect(await context.store.readMessages(session.id, 'main')).toEqual([]);
    });

    it('is idempotent: a retried append inserts nothing and each message is read once', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 3);
      expect(await store.appendMessages(session.id, 'main', messages)).toEqual({ inserted: 0 });
      expect(await store.appendMessages(session.id, 'main', messages.slice(1))).toEqual({ inserted: 0 });
      const read = await store.readMessages(session.id, 'main');
      expect(ids(read)).toEqual(ids(messages));
    });

    it('stores only the new part of a retried batch that overlaps what is stored', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 3);
      const more = makeMessages(4, 2);
      expect(await store.appendMessages(session.id, 'main', [messages[1]!, messages[2]!, ...more])).toEqual({
        inserted: 2,
      });
      expect(ids(await store.readMessages(session.id, 'main'))).toEqual(ids([...messages, ...more]));
    });

    it('refuses a seq already taken by another message, storing nothing of the batch', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 2);
      const rival = makeMessage(2);
      await expect(store.appendMessages(session.id, 'main', [rival, makeMessage(3)])).rejects.toBeInstanceOf(
        ConcurrencyError,
      );
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);
    });

    it('lets one of two writers racing for the same seq win; the other gets a ConcurrencyError', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 1);
      const a = makeMessage(2, { content: 'writer a' });
      const b = makeMessage(2, { content: 'writer b' });
      const results = await Promise.allSettled([
        store.appendMessages(session.id, 'main', [a]),
        store.appendMessages(session.id, 'main', [b]),
      ]);
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected).toHaveLength(1);
      expect(rejected[0]?.reason).toBeInstanceOf(ConcurrencyError);
      const read = await store.readMessages(session.id, 'main');
      expect(seqs(read)).toEqual([1, 2]);
      expect([a.id, b.id]).toContain(read[1]?.id);
    });

    it('refuses a gap in seq, a descending batch and an invalid message with InvalidInputError', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 2);
      await expect(store.appendMessages(session.id, 'main', [makeMessage(4)])).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.appendMessages(session.id, 'main', [makeMessage(4), makeMessage(3)])).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.appendMessages(session.id, 'main', [makeMessage(3), makeMessage(3)])).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      const noContent = { ...makeMessage(3), content: undefined } as unknown as Message;
      await expect(store.appendMessages(session.id, 'main', [noContent])).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.appendMessages(session.id, 'main', [makeMessage(0)])).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);
    });

    it('refuses message metadata with operator or dotted keys', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      await expect(
        store.appendMessages(session.id, 'main', [makeMessage(1, { metadata: { $set: 1 } })]),
      ).rejects.toBeInstanceOf(InvalidInputError);
      await expect(
        store.appendMessages(session.id, 'main', [makeMessage(1, { metadata: { nested: { 'a.b': 1 } } })]),
      ).rejects.toBeInstanceOf(InvalidInputError);
      expect(await store.readMessages(session.id, 'main')).toEqual([]);
    });

    it('accepts an empty append', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 1);
      expect(await store.appendMessages(session.id, 'main', [])).toEqual({ inserted: 0 });
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);
    });

    it('refuses appends and reads of a missing session or branch with NotFoundError', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      await expect(store.appendMessages(uniqueId('missing'), 'main', [makeMessage(1)])).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(store.appendMessages(session.id, 'nope', [makeMessage(1)])).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.readMessages(uniqueId('missing'), 'main')).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.readMessages(session.id, 'nope')).rejects.toBeInstanceOf(NotFoundError);
    });

    it('reads ranges: fromSeq and throughSeq are inclusive, out-of-range bounds give what exists', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 10);
      const read = (options: { fromSeq?: number; throughSeq?: number }) =>
        store.readMessages(session.id, 'main', options).then(seqs);
      expect(await read({ fromSeq: 4 })).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect(await read({ throughSeq: 3 })).toEqual([1, 2, 3]);
      expect(await read({ fromSeq: 3, throughSeq: 5 })).toEqual([3, 4, 5]);
      expect(await read({ fromSeq: 7, throughSeq: 7 })).toEqual([7]);
      expect(await read({ fromSeq: 9, throughSeq: 50 })).toEqual([9, 10]);
      expect(await read({ fromSeq: 11 })).toEqual([]);
      expect(await read({ fromSeq: 6, throughSeq: 5 })).toEqual([]);
      expect(await read({ throughSeq: 0 })).toEqual([]);
    });

    it('reads the newest window of a fork: one range spanning its fork point, and one past it', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 40);
      await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 30 } });
      await store.appendMessages(session.id, 'alt', makeMessages(31, 10, { content: 'on the fork' }));
      const read = (options: { fromSeq?: number; throughSeq?: number }) =>
        store.readMessages(session.id, 'alt', options);
      const whole = await read({});
      expect(seqs(whole)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(await read({ fromSeq: 26 })).toEqual(whole.slice(25));
      expect(await read({ fromSeq: 33, throughSeq: 37 })).toEqual(whole.slice(32, 37));
      expect((await read({ fromSeq: 31 })).map((m) => m.content)).toEqual(Array(10).fill('on the fork'));
    });

    it('keeps a long conversation in order across many small appends', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const all = makeMessages(1, 60);
      for (let index = 0; index < all.length; index += 3)
        await store.appendMessages(session.id, 'main', all.slice(index, index + 3));
      expect(await store.readMessages(session.id, 'main')).toEqual(all);
    });
  });
}
