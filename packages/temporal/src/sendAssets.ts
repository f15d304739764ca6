import { type AssetRef, AssetRefSchema, InvalidInputError } from '@baton/core';

/**
 * The asset references a send Update carries, checked where it is sent (zod, `AssetRefSchema`):
 * each must be an `AssetRef` of session `sessionId` (from `session.attach`, `session.assets.put` or
 * `store.putAsset`). They travel as plain JSON; the worker stores them in the user message's
 * `metadata.assets` as an in-process `session.send(text, { assets })` does (and checks them again).
 *
 * @returns the parsed references (`undefined` for none, so a text-only Update carries no `assets`)
 * @throws {InvalidInputError} for something that is not an array of asset references, or a reference of another session
 * @example
 * ```ts
 * sendAssets('chat-81', [receipt]); // [receipt]
 * sendAssets('chat-81', [{ id: 'x' }]); // throws InvalidInputError
 * ```
 */
export function sendAssets(sessionId: string, assets: readonly unknown[] | undefined): AssetRef[] | undefined {
  if (assets === undefined) return undefined;
  const parsed = AssetRefSchema.array().safeParse(assets);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const at = issue === undefined ? '' : ` (${issue.path.join('.') || 'assets'}: ${issue.message})`;
    throw new InvalidInputError(
      `send()'s assets must be asset references of session ${JSON.stringify(sessionId)} (what session.attach() or store.putAsset() returned), not ${JSON.stringify(assets)}${at}.`,
    );
  }
  const foreign = parsed.data.find((ref) => ref.sessionId !== sessionId);
  if (foreign !== undefined) {
    throw new InvalidInputError(
      `Asset ${JSON.stringify(foreign.id)} belongs to session ${JSON.stringify(foreign.sessionId)}, not ${JSON.stringify(sessionId)}: attach it to this session first.`,
    );
  }
  return parsed.data.length === 0 ? undefined : parsed.data;
}
