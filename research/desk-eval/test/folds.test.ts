import { createHash } from 'node:crypto';
import { InvalidInputError } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { beforeAll, describe, expect, it } from 'vitest';
import { crossValidationFolds, FOLDS, foldOf } from '../src/folds.js';

let conversations: AbcdConversation[];
beforeAll(async () => {
  conversations = await loadConversations(DEMO_DATA_FILE);
});

/** The documented scheme, written out: the first 4 bytes of the digest, big-endian, modulo the folds. */
const documented = (input: string, folds: number) =>
  createHash('sha256').update(input).digest().readUInt32BE(0) % folds;

describe('foldOf with a seed', () => {
  it('hashes "baton-fold:<seed>:<id>", and without a seed still "baton-fold:<id>" (the default partition is unchanged)', () => {
    for (const { id } of conversations) {
      expect(foldOf(id, 10, '3')).toBe(documented(`baton-fold:3:${id}`, 10));
      expect(foldOf(id)).toBe(documented(`baton-fold:${id}`, FOLDS));
      expect(foldOf(id, FOLDS, undefined)).toBe(foldOf(id));
    }
    expect(foldOf('abcd-dev-0061')).toBe(2);
  });

  it('draws another partition than no seed, and each seed another one, the same on every call', () => {
    const partition = (seed?: string) => conversations.map((c) => foldOf(c.id, FOLDS, seed));
    const unseeded = partition();
    const seeded = partition('1');
    expect(partition('1')).toStrictEqual(seeded);
    // Two partitions of 82 conversations into 5 folds agree on about a fifth of them by chance, far from all.
    const agree = (a: number[], b: number[]) => a.filter((fold, i) => fold === b[i]).length;
    expect(agree(seeded, unseeded)).toBeLessThan(conversations.length / 2);
    expect(agree(partition('2'), seeded)).toBeLessThan(conversations.length / 2);
  });
});

describe('crossValidationFolds with a seed', () => {
  for (const folds of [2, 10]) {
    it(`puts every conversation in exactly one test fold of ${folds}, and trains each fold on all the others`, () => {
      const split = crossValidationFolds(conversations, folds, 'x');
      expect(split.map((f) => f.fold)).toStrictEqual(Array.from({ length: folds }, (_, i) => i));
      const tested = split.flatMap((f) => f.test.map((c) => c.id));
      expect(tested.sort()).toStrictEqual(conversations.map((c) => c.id).sort());
      for (const { fold, train, test } of split) {
        expect(test.every((c) => foldOf(c.id, folds, 'x') === fold)).toBe(true);
        expect(train.length + test.length).toBe(conversations.length);
        expect(train.some((c) => test.includes(c))).toBe(false);
      }
    });

    it(`cuts 2,000 ids into ${folds} folds of about equal size (each within a quarter of the mean)`, () => {
      const items = Array.from({ length: 2000 }, (_, i) => ({ id: `conversation-${i}` }));
      const mean = items.length / folds;
      for (const seed of ['1', '2', 'x']) {
        for (const { test } of crossValidationFolds(items, folds, seed)) {
          expect(test.length).toBeGreaterThan(mean * 0.75);
          expect(test.length).toBeLessThan(mean * 1.25);
        }
      }
    });
  }
});

describe('bad folds and seeds', () => {
  it('are refused with InvalidInputError: folds not a whole number 2–50, more folds given than items, a seed not 1–64 printable characters', () => {
    for (const folds of [0, 1, 51, 2.5, Number.NaN]) {
      expect(() => foldOf('a', folds)).toThrow(InvalidInputError);
      expect(() => crossValidationFolds(conversations, folds, 'x')).toThrow(/whole number from 2 to 50/);
    }
    expect(() => crossValidationFolds(conversations.slice(0, 3), 4)).toThrow(InvalidInputError);
    expect(() => crossValidationFolds(conversations.slice(0, 3), 4)).toThrow(
      'Cannot cut 3 conversations into 4 cross-validation folds',
    );
    expect(crossValidationFolds(conversations.slice(0, 3), 3, 'x').flatMap((f) => f.test)).toHaveLength(3);
    // The default 5 folds still take fewer items, as they always have (some folds then test nothing).
    expect(crossValidationFolds(conversations.slice(0, 3)).flatMap((f) => f.test)).toHaveLength(3);
    for (const seed of ['', 'x'.repeat(65), 'a\nb', 'tab\t', 'é']) {
      expect(() => foldOf('a', FOLDS, seed)).toThrow(InvalidInputError);
      expect(() => crossValidationFolds(conversations, FOLDS, seed)).toThrow(/printable ASCII/);
    }
    expect(foldOf('a', 50, `${'x'.repeat(63)} `)).toBeLessThan(50);
  });
});
