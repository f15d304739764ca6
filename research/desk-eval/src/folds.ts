import { createHash } from 'node:crypto';
import { InvalidInputError } from '@baton/core';

/** The number of cross-validation folds the replay evaluates with. */
export const FOLDS = 5;

/** The fewest folds a cross-validation may have. */
export const MIN_FOLDS = 2;

/** The most folds a cross-validation may have. */
export const MAX_FOLDS = 50;

/** The longest cross-validation seed, in characters. */
export const MAX_SEED_LENGTH = 64;

/** A seed: 1 to {@link MAX_SEED_LENGTH} printable ASCII characters (space to `~`). */
const SEED_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${MAX_SEED_LENGTH}}$`);

/**
 * A cross-validation partition: how many folds, and the seed that draws them (`undefined`: the default
 * partition, the one every figure of the README was measured on). Repeating a cross-validation with
 * seeds `1`, `2`, … gives other random partitions of the same conversations (as scikit-learn's `RepeatedKFold`).
 */
export interface CrossValidationScheme {
  /** Whole number, {@link MIN_FOLDS}–{@link MAX_FOLDS}. */
  folds: number;
  /** 1–{@link MAX_SEED_LENGTH} printable ASCII characters, or `undefined` for the default partition. */
  seed?: string | undefined;
}

/**
 * Checks a cross-validation scheme.
 *
 * @param folds how many folds
 * @param seed the seed, if any
 * @param items how many items are split (when known): there may be no more folds than items
 * @throws {InvalidInputError} when `folds` is not a whole number {@link MIN_FOLDS}–{@link MAX_FOLDS}, is more than
 *   `items`, or `seed` is not 1–{@link MAX_SEED_LENGTH} printable ASCII characters
 */
export function checkCrossValidation(folds: number, seed?: string, items?: number): void {
  if (!Number.isInteger(folds) || folds < MIN_FOLDS || folds > MAX_FOLDS) {
    throw new InvalidInputError(
      `Cross-validation folds must be a whole number from ${MIN_FOLDS} to ${MAX_FOLDS}, not ${folds}.`,
    );
  }
  if (items !== undefined && folds > items)
    throw new InvalidInputError(
      `Cannot cut ${items} conversation${items === 1 ? '' : 's'} into ${folds} cross-validation folds: use at most ${items} folds.`,
    );
  if (seed !== undefined && (typeof seed !== 'string' || !SEED_PATTERN.test(seed))) {
    throw new InvalidInputError(
      `A cross-validation seed must be 1 to ${MAX_SEED_LENGTH} printable ASCII characters, not ${JSON.stringify(seed)}.`,
    );
  }
}

/**
 * The cross-validation fold of a conversation: `sha256("baton-fold:" + id)`, or with a seed
 * `sha256("baton-fold:" + seed + ":" + id)`, its first 4 bytes read as a big-endian number, modulo
 * `folds`. Stable across runs, machines and file orders, so every run with the same folds and seed
 * evaluates the same split; another seed gives another split.
 *
 * @param id the conversation id
 * @param folds how many folds (default {@link FOLDS}; whole number {@link MIN_FOLDS}–{@link MAX_FOLDS})
 * @param seed draws another partition (1–{@link MAX_SEED_LENGTH} printable ASCII characters); `undefined`: the default one
 * @returns 0 … folds-1
 * @throws {InvalidInputError} for folds or a seed out of range (see {@link checkCrossValidation})
 * @example
 * ```ts
 * foldOf('abcd-dev-0061'); // 2, always
 * foldOf('abcd-dev-0061', 10, '3'); // the fold of another partition, always the same
 * ```
 */
export function foldOf(id: string, folds: number = FOLDS, seed?: string): number {
  checkCrossValidation(folds, seed);
  const digest = createHash('sha256')
    .update(seed === undefined ? `baton-fold:${id}` : `baton-fold:${seed}:${id}`)
    .digest();
  return digest.readUInt32BE(0) % folds;
}

/**
 * Splits items into `folds` cross-validation folds by {@link foldOf} of their id.
 * @param items anything with an `id`
 * @param folds how many folds: a whole number {@link MIN_FOLDS}–{@link MAX_FOLDS}, at most `items.length`; when omitted
 *   {@link FOLDS}, which also takes fewer items (some folds then test nothing), as it always has
 * @param seed draws another partition (see {@link foldOf}); `undefined`: the default one
 * @returns for each fold, the items it tests (`test`) and the items its models learn from (`train`); each item is in exactly one `test`
 * @throws {InvalidInputError} for folds or a seed out of range, or more folds given than items (see {@link checkCrossValidation})
 */
export function crossValidationFolds<T extends { id: string }>(
  items: readonly T[],
  givenFolds?: number,
  seed?: string,
): Array<{ fold: number; train: T[]; test: T[] }> {
  const folds = givenFolds ?? FOLDS;
  checkCrossValidation(folds, seed, givenFolds === undefined ? undefined : items.length);
  const foldOfItem = items.map((item) => foldOf(item.id, folds, seed));
  return Array.from({ length: folds }, (_, fold) => ({
    fold,
    train: items.filter((_, i) => foldOfItem[i] !== fold),
    test: items.filter((_, i) => foldOfItem[i] === fold),
  }));
}
