import { createHash, type Hash } from 'node:crypto';
import { format as formatContentType, parse as parseContentType } from 'content-type';
import { isoNow } from '../../clock.js';
import { type AssetRef, AssetRefSchema } from '../../conversation/asset.js';
import { AssetTooLargeError, ConfigurationError, DocumentCorruptError, InvalidInputError } from '../../errors.js';
import { createId } from '../../ids.js';
import type { PutAssetInput } from '../store.js';

/** The default largest asset a store accepts: 25 MiB, in bytes. */
export const DEFAULT_MAX_ASSET_BYTES = 25 * 1024 * 1024;

/** A `putAsset` input that passed {@link checkAssetInput}: the name, the normalized content type, the content. */
export interface CheckedAssetInput {
  name: string;
  contentType: string;
  /** The content as chunks (one chunk for `bytes`). */
  chunks: AsyncIterable<Uint8Array>;
  /** The size when known up front (`bytes`), in bytes. */
  knownSize?: number;
}

// Control characters (C0 and DEL) and path separators: a file name as a browser or a phone sends it has none.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const BAD_NAME = /[\u0000-\u001f\u007f/\\]/;

/**
 * Validates what `putAsset` was given (see `PutAssetInput`).
 * @returns the input with its content type normalized (`IMAGE/PNG` → `image/png`)
 * @throws {InvalidInputError} naming the bad field: a name that is empty, longer than 255
 *   characters or holds control characters or `/` `\`; a content type that is not `type/subtype`;
 *   not exactly one of `bytes` (a `Uint8Array`) and `stream` (an async iterable)
 * @example
 * ```ts
 * checkAssetInput({ name: 'receipt.png', contentType: 'Image/PNG', bytes }).contentType; // 'image/png'
 * ```
 */
export function checkAssetInput(input: PutAssetInput): CheckedAssetInput {
  if (input === null || typeof input !== 'object')
    throw new InvalidInputError(`putAsset takes { name, contentType, bytes | stream }, not ${JSON.stringify(input)}.`);
  const { name, contentType, bytes, stream } = input;
  if (typeof name !== 'string' || name.length === 0 || name.length > 255 || BAD_NAME.test(name)) {
    throw new InvalidInputError(
      `Invalid asset name ${JSON.stringify(name)}: use the file's own name, 1-255 characters without control characters, "/" or "\\" (e.g. "receipt.png").`,
    );
  }
  let normalized: string;
  try {
    if (typeof contentType !== 'string' || contentType.length > 255)
      throw new TypeError('not a string of at most 255 characters');
    normalized = formatContentType(parseContentType(contentType));
  } catch (cause) {
    throw new InvalidInputError(
      `Invalid asset content type ${JSON.stringify(contentType)}: use a MIME type such as "image/png" or "application/pdf".`,
      { cause },
    );
  }
  const hasBytes = bytes !== undefined;
  const hasStream = stream !== undefined;
  if (hasBytes === hasStream)
    throw new InvalidInputError(
      `putAsset takes exactly one of bytes (a Uint8Array) and stream (an async iterable of bytes) for asset ${JSON.stringify(name)}.`,
    );
  if (hasBytes) {
    if (!(bytes instanceof Uint8Array))
      throw new InvalidInputError(
        `The bytes of asset ${JSON.stringify(name)} must be a Uint8Array (a Buffer is one), not ${typeof bytes}.`,
      );
    return { name, contentType: normalized, chunks: once(bytes), knownSize: bytes.byteLength };
  }
  if (stream === null || typeof (stream as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') {
    throw new InvalidInputError(
      `The stream of asset ${JSON.stringify(name)} must be an async iterable of bytes (a Node.js Readable, a web ReadableStream).`,
    );
  }
  return { name, contentType: normalized, chunks: stream as AsyncIterable<Uint8Array> };
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * Reads an asset's chunks while counting and hashing them, and refuses it once it passes the limit
 * (before the excess is stored). Read `chunks()` to the end, then `ref()`.
 *
 * @example
 * ```ts
 * const meter = new AssetMeter(checkAssetInput(input), store.maxAssetBytes);
 * for await (const chunk of meter.chunks()) await file.write(chunk);
 * const ref = meter.ref('chat-1');
 * ```
 */
export class AssetMeter {
  readonly #input: CheckedAssetInput;
  readonly #limit: number;
  readonly #hash: Hash = createHash('sha256');
  #size = 0;

  /**
   * @param input a checked input
   * @param limit the most bytes accepted
   * @throws {AssetTooLargeError} when the input's known size is over the limit
   */
  constructor(input: CheckedAssetInput, limit: number) {
    this.#input = input;
    this.#limit = limit;
    if (input.knownSize !== undefined && input.knownSize > limit) throw tooLarge(input.name, limit, input.knownSize);
  }

  /** Bytes read so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * The content, chunk by chunk, counted and hashed.
   * @throws {AssetTooLargeError} once more than the limit was read; {@link InvalidInputError} for a chunk that is not bytes
   */
  async *chunks(): AsyncGenerator<Uint8Array> {
    for await (const chunk of this.#input.chunks) {
      if (!(chunk instanceof Uint8Array)) {
        throw new InvalidInputError(
          `The stream of asset ${JSON.stringify(this.#input.name)} gave a ${typeof chunk}, not bytes: read it without an encoding.`,
        );
      }
      this.#size += chunk.byteLength;
      if (this.#size > this.#limit) throw tooLarge(this.#input.name, this.#limit);
      this.#hash.update(chunk);
      yield chunk;
    }
  }

  /** The reference of the asset read: its id (a new one by default), the size and SHA-256 of what was read, now as `createdAt`. */
  ref(sessionId: string, id: string = createId()): AssetRef {
    const { name, contentType } = this.#input;
    return {
      id,
      sessionId,
      name,
      contentType,
      size: this.#size,
      sha256: this.#hash.digest('hex'),
      createdAt: isoNow(),
    };
  }
}

/**
 * Reads a whole asset into memory (for stores that keep the bytes in one piece).
 * @returns the reference and the bytes
 * @throws {AssetTooLargeError} past `limit`; {@link InvalidInputError} for bad input
 */
export async function readWholeAsset(
  sessionId: string,
  input: CheckedAssetInput,
  limit: number,
): Promise<{ ref: AssetRef; bytes: Uint8Array }> {
  const meter = new AssetMeter(input, limit);
  const parts: Uint8Array[] = [];
  for await (const chunk of meter.chunks()) parts.push(Uint8Array.from(chunk)); // a copy: the caller may reuse its buffer
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return { ref: meter.ref(sessionId), bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/**
 * Checks a stored asset's bytes against its reference (size and SHA-256).
 * @throws {DocumentCorruptError} naming `where` when they differ (the bytes changed after they were stored)
 * @example
 * ```ts
 * verifyAssetBytes(ref, await readFile(path), path); // returns, or throws DocumentCorruptError
 * ```
 */
export function verifyAssetBytes(ref: AssetRef, bytes: Uint8Array, where: string): void {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.byteLength !== ref.size || sha256 !== ref.sha256) {
    throw new DocumentCorruptError(
      `Asset ${JSON.stringify(ref.id)} (${where}) holds ${bytes.byteLength} bytes with SHA-256 ${sha256}, not the ${ref.size} bytes with SHA-256 ${ref.sha256} it was stored with; restore it from a backup or delete it.`,
      where,
      'bytes',
    );
  }
}

/**
 * Parses a stored asset reference as strictly as it was written.
 * @throws {DocumentCorruptError} naming `where` and the first bad field
 * @example
 * ```ts
 * const ref = parseStoredAssetRef(JSON.parse(await readFile(path, 'utf8')), path);
 * ```
 */
export function parseStoredAssetRef(value: unknown, where: string): AssetRef {
  const parsed = AssetRefSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
  throw new DocumentCorruptError(
    `The asset reference ${where} is damaged at ${field}: ${issue?.message ?? 'invalid'}; restore it from a backup or delete it.`,
    where,
    field,
  );
}

/**
 * Validates a store's `maxAssetBytes` option.
 * @returns the limit (the default when `undefined`)
 * @throws {ConfigurationError} for anything but a positive integer
 * @example
 * ```ts
 * assertMaxAssetBytes('MyStore', undefined); // 26214400 (25 MiB)
 * assertMaxAssetBytes('MyStore', -1); // throws ConfigurationError
 * ```
 */
export function assertMaxAssetBytes(store: string, value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_ASSET_BYTES;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new ConfigurationError(
      `${store} needs maxAssetBytes as a positive whole number of bytes, got ${JSON.stringify(value)}.`,
    );
  return value;
}

function tooLarge(name: string, limit: number, size?: number): AssetTooLargeError {
  const what = size === undefined ? 'more than' : `${size} bytes, more than`;
  return new AssetTooLargeError(
    `Asset ${JSON.stringify(name)} is ${what} the ${limit} bytes this store accepts (maxAssetBytes); send a smaller file or raise the limit.`,
    limit,
  );
}
