/**
 * Property test of idempotent appends (`planAppend` through the stores): any interleaving of
 * retried, partial, overlapping and gapped appends of one conversation on InMemoryStore and
 * FileStore (a real temp dir) stores each seq exactly once, in order, with no hole, exactly as a
 * model of the branch says; an append that would leave a gap is refused (InvalidInputError); a
 * rival write of a taken seq with another message is refused (ConcurrencyError) and nothing of
 * its batch is applied.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConcurrencyError,
  createId,
  FileStore,
  InMemoryStore,
  InvalidInputError,
  type Message,
  type Store,
} from '../src/index.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('append-property');
const CONVERSATION = 12;

/** One append: messages `from..to` of the conversation, or (rival) the same seqs with one taken seq holding another message. */
type Append = { from: number; to: number; rival: false } | { from: number; to: number; rival: true; pick: number };

const appendArbitrary: fc.Arbitrary<Append> = fc
  .tuple(fc.integer({ min: 1, max: CONVERSATION }), fc.integer({ min: 0, max: 4 }), fc.boolean(), fc.nat())
  .map(([from, length, rival, pick]) => {
    const to = Math.min(CONVERSATION, from + length);
    return rival ? { from, to, rival, pick } : { from, to, rival };
  });

const stores: [string, () => Promise<Store>, number][] = [
  ['InMemoryStore', async () => new InMemoryStore(), 300],
  ['FileStore', async () => new FileStore({ directory: await tempDir() }), 40],
];

let sessionCount = 0;
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
});

describe.each(stores)('appendMessages on %s (property)', (_name, create, numRuns) => {
  it('stores each seq once, in order, without a hole, whatever the retries; refuses gaps and rival writes whole', async () => {
    const store = await create();
    opened.push(store);
    await fc.assert(
      fc.asyncProperty(fc.array(appendArbitrary, { minLength: 1, maxLength: 10 }), async (appends) => {
        const sessionId = `prop-${++sessionCount}`;
        await store.createSession({ id: sessionId });
        const conversation = Array.from({ length: CONVERSATION }, (_, index) => makeMessage(index + 1));
        let stored = 0;
        for (const append of appends) {
          const batch = conversation.slice(append.from - 1, append.to);
          if (append.rival) {
            const taken = batch.filter((m) => m.seq <= stored);
            if (taken.length === 0) continue;
            const victim = taken[append.pick % taken.length]!;
            const rival: Message[] = batch.map((m) =>
              m.seq === victim.seq ? { ...m, id: createId(), content: 'a rival writer' } : m,
            );
            await expect(store.appendMessages(sessionId, 'main', rival)).rejects.toBeInstanceOf(ConcurrencyError);
          } else if (append.from > stored + 1) {
            await expect(store.appendMessages(sessionId, 'main', batch)).rejects.toBeInstanceOf(InvalidInputError);
          } else {
            const { inserted } = await store.appendMessages(sessionId, 'main', batch);
            expect(inserted).toBe(Math.max(0, append.to - stored));
            stored = Math.max(stored, append.to);
          }
          expect(await store.readMessages(sessionId, 'main')).toEqual(conversation.slice(0, stored));
        }
        // Whatever happened, the rest appends cleanly and the branch holds the conversation once.
        await store.appendMessages(sessionId, 'main', conversation);
        const all = await store.readMessages(sessionId, 'main');
        expect(all).toEqual(conversation);
        expect(all.map((m) => m.seq)).toEqual(Array.from({ length: CONVERSATION }, (_, index) => index + 1));
      }),
      { seed: 3, numRuns },
    );
  });
});
