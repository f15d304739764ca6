import { ASSETS_METADATA_KEY, type AssetRef, AssetRefSchema, InvalidInputError } from '@baton/core';

/**
 * The metadata of a user message that refers to `refs` (`{ assets: [...] }`), after checking each
 * is an asset reference of session `sessionId` (from `session.attach`, `session.assets.put` or
 * `store.putAsset`); the bytes stay in the store.
 *
 * @returns `undefined` for no references
 * @throws {InvalidInputError} for something that is not an `AssetRef`, or one of another session
 * @example
 * ```ts
 * assetsMetadata('chat-1', [ref]); // { assets: [ref] }
 * ```
 */
export function assetsMetadata(
  sessionId: string,
  refs: readonly AssetRef[] | undefined,
): Record<string, unknown> | undefined {
  if (refs === undefined) return undefined;
  if (!Array.isArray(refs))
    throw new InvalidInputError(
      `send()'s assets must be an array of asset references (from session.attach), not ${JSON.stringify(refs)}.`,
    );
  if (refs.length === 0) return undefined;
  const checked = refs.map((ref) => {
    const parsed = AssetRefSchema.safeParse(ref);
    if (!parsed.success)
      throw new InvalidInputError(
        `${JSON.stringify(ref)} is not an asset reference: pass what session.attach() returned.`,
      );
    if (parsed.data.sessionId !== sessionId) {
      throw new InvalidInputError(
        `Asset ${JSON.stringify(parsed.data.id)} belongs to session ${JSON.stringify(parsed.data.sessionId)}, not ${JSON.stringify(sessionId)}: attach it to this session first.`,
      );
    }
    return parsed.data;
  });
  return { [ASSETS_METADATA_KEY]: checked };
}
