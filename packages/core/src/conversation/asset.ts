import { z } from 'zod';
import { isValidId } from '../ids.js';
import { IsoTimestampSchema } from '../timestamp.js';

/**
 * A file a user uploaded to a session (a receipt photo, a PDF), as messages and tools refer to it:
 * the store keeps the bytes, and everything else holds only this reference (a message in its
 * `metadata.assets`, never the bytes; checkpoints hold neither). `size` is in bytes; `sha256` is the
 * lowercase hex SHA-256 of the bytes; `createdAt` is ISO-8601 UTC.
 *
 * @example
 * ```ts
 * const refs = AssetRefSchema.array().parse(message.metadata?.assets ?? []);
 * ```
 */
export const AssetRefSchema = z.object({
  id: z.string().refine(isValidId, 'an asset id (1-128 of A-Z a-z 0-9 _ - : .)'),
  sessionId: z.string().refine(isValidId, 'a session id'),
  name: z.string().min(1).max(255),
  contentType: z.string().min(3).max(255),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: IsoTimestampSchema,
});

/**
 * `{ id, sessionId, name, contentType, size, sha256, createdAt }`: a stored asset's reference
 * (see {@link AssetRefSchema}).
 *
 * @example
 * ```ts
 * const ref: AssetRef = await session.assets.put({ name: 'receipt.png', contentType: 'image/png', bytes });
 * await session.send('Here is my receipt', { assets: [ref] });
 * ```
 */
export type AssetRef = z.infer<typeof AssetRefSchema>;

/**
 * The metadata key under which a message lists the assets it refers to (an array of {@link AssetRef}).
 * @example
 * ```ts
 * const message = { role: 'user', content: 'My receipt', metadata: { [ASSETS_METADATA_KEY]: [ref] } };
 * ```
 */
export const ASSETS_METADATA_KEY = 'assets';

/**
 * The assets a message refers to: its `metadata.assets` entries that are asset references
 * (anything else there is ignored).
 *
 * @param message a stored message, or anything with `metadata`
 * @returns the references, in the order the message lists them (empty when none)
 * @example
 * ```ts
 * const [receipt] = assetRefsOf(session.messages.at(-1)!);
 * const stored = receipt && (await session.assets.get(receipt.id));
 * ```
 */
export function assetRefsOf(message: { metadata?: Readonly<Record<string, unknown>> | undefined }): AssetRef[] {
  const listed = message.metadata?.[ASSETS_METADATA_KEY];
  if (!Array.isArray(listed)) return [];
  const refs: AssetRef[] = [];
  for (const entry of listed) {
    const parsed = AssetRefSchema.safeParse(entry);
    if (parsed.success) refs.push(parsed.data);
  }
  return refs;
}

/**
 * The note a model sees after the text of a message with assets (the model cannot read the bytes;
 * a tool can, by the asset id): one line per asset.
 *
 * @returns `''` for no assets, else e.g. `[Attached asset 0190…: receipt.png (image/png, 48213 bytes)]`
 * @example
 * ```ts
 * describeAssets([ref]); // '[Attached asset 0190…: receipt.png (image/png, 48213 bytes)]'
 * ```
 */
export function describeAssets(refs: readonly AssetRef[]): string {
  return refs
    .map((ref) => `[Attached asset ${ref.id}: ${ref.name} (${ref.contentType}, ${ref.size} bytes)]`)
    .join('\n');
}
