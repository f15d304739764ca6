import { createHash } from 'node:crypto';

/** The number of cross-validation folds the replay evaluates with. */
export const FOLDS = 5;

/**
 * The cross-validation fold of a conversation: `sha256("baton-fold:" + id)` read as a number, modulo
 * `folds`. Stable across runs, machines and file orders, so every run evaluates the same split.
 *
 * @param id the conversation id
 * @param folds how many folds (default {@link FOLDS})
 * @returns 0 … folds-1
 * @example
 * ```ts
 * foldOf('abcd-dev-0061'); // always the same fold
 * ```
 */
export function foldOf(id: string, folds: number = FOLDS): number {
  const digest = createHash('sha256').update(`baton-fold:${id}`).digest();
  return digest.readUInt32BE(0) % folds;
}

/**
 * Splits items into `folds` cross-validation folds by {@link foldOf} of their id.
 * @param items anything with an `id`
 * @param folds how many folds (default {@link FOLDS})
 * @returns for each fold, the items it tests (`test`) and the items its models learn from (`train`)
 */
export function crossValidationFolds<T extends { id: string }>(items: readonly T[], folds: number = FOLDS): Array<{ fold: number; train: T[]; test: T[] }> {
  return Array.from({ length: folds }, (_, fold) => ({
    fold,
    train: items.filter((item) => foldOf(item.id, folds) !== fold),
    test: items.filter((item) => foldOf(item.id, folds) === fold),
  }));
}
