/** Errors of the store (the system's fault): lost races, I/O failures, damaged or too-new documents. */
import { BatonErrorCode, BatonError, type BatonErrorOptions } from './batonError.js';

/**
 * A write lost a race: the stored `version` is not the `expectedVersion`, or another writer holds
 * the session. Reload and retry.
 */
export class ConcurrencyError extends BatonError {
  readonly code = BatonErrorCode.CONCURRENCY;
}

/** A stored checkpoint cannot be parsed or fails its schema. Nothing is loaded from it. */
export class CheckpointCorruptError extends BatonError {
  readonly code = BatonErrorCode.CHECKPOINT_CORRUPT;
}

/** The store failed (I/O error, lost database connection). The write may be retried: writes are idempotent. */
export class StoreError extends BatonError {
  readonly code: BatonErrorCode = BatonErrorCode.STORE;
}

/**
 * A stored session, branch, message or episode fails the rules its write had to pass (its schema,
 * id rules, ISO-8601 timestamps, metadata keys): it was damaged or written by something else.
 * Nothing is returned from it, and retrying does not help: restore the document from a backup.
 * A `StoreError` (code `DOCUMENT_CORRUPT`), so code that catches store failures catches it too.
 *
 * @example
 * ```ts
 * import { DocumentCorruptError } from '@baton/core';
 * try { await store.getSession('chat-1'); }
 * catch (error) { if (error instanceof DocumentCorruptError) console.error(error.document, error.field); }
 * ```
 */
export class DocumentCorruptError extends StoreError {
  override readonly code = BatonErrorCode.DOCUMENT_CORRUPT;
  /**
   * @param message the whole sentence, naming the document and the field
   * @param document which document (`'session "chat-1"'`, a file path)
   * @param field the path of the first bad field (`'createdAt'`, `'metadata.a'`, `'(root)'`)
   */
  constructor(
    message: string,
    readonly document: string,
    readonly field: string,
    options: BatonErrorOptions = {},
  ) {
    super(message, options);
  }
}

/**
 * A record (line) of a `FileStore` session log is damaged: its CRC-32C checksum does not match its
 * bytes, it is not JSON, or it contradicts the records before it. Says which record (`record`: its
 * line number, the header being 1; `offset`: the byte where it starts) and what is intact: the
 * records before it, which hold each branch's messages through `intactThroughSeq[branchId]` (known
 * when the call read the log up to the record; `undefined` when it read only part of it: run
 * `FileStore.verify`). `FileStore.repair` (`baton store repair`) keeps those records and moves the
 * damaged log aside; or restore the file from a backup. A `DocumentCorruptError` (code `DOCUMENT_CORRUPT`).
 *
 * @example
 * ```ts
 * import { LogRecordCorruptError } from '@baton/core';
 * try { await store.readMessages('chat-1', 'main'); }
 * catch (error) { if (error instanceof LogRecordCorruptError) console.error(error.record, error.offset, error.intactThroughSeq); }
 * ```
 */
export class LogRecordCorruptError extends DocumentCorruptError {
  /**
   * @param message the whole sentence, naming the file, the record and what to do
   * @param file the session log's path
   * @param record the damaged record's line number in the file (1 = the header)
   * @param offset the byte offset in the file where the damaged record (or the damaged bytes a
   *   ranged read found) starts
   * @param intactThroughSeq per branch id, the last seq the records before it hold (`undefined` when not known)
   */
  constructor(
    message: string,
    readonly file: string,
    readonly record: number,
    readonly offset: number,
    readonly intactThroughSeq: Readonly<Record<string, number>> | undefined,
    options: BatonErrorOptions & { field?: string } = {},
  ) {
    super(message, `line ${record} of ${file}`, options.field ?? '(root)', options);
  }
}

/**
 * A stored document (session, branch, message, episode or checkpoint) has a `schemaVersion` newer
 * than this code knows: it was written by a newer Baton. Nothing is returned from it (reading it
 * with the older rules could silently drop or misread fields); upgrade the package that reads it.
 * A `StoreError` (code `UNSUPPORTED_SCHEMA_VERSION`), so code that catches store failures catches it too.
 *
 * @example
 * ```ts
 * import { UnsupportedSchemaVersionError } from '@baton/core';
 * try { await store.getSession('chat-1'); }
 * catch (error) { if (error instanceof UnsupportedSchemaVersionError) console.error(error.kind, error.version, error.supported); }
 * ```
 */
export class UnsupportedSchemaVersionError extends StoreError {
  override readonly code = BatonErrorCode.UNSUPPORTED_SCHEMA_VERSION;
  /**
   * @param kind the document kind (`'session'`, `'branch'`, `'message'`, `'episode'`, `'checkpoint'`)
   * @param version the `schemaVersion` the document has
   * @param supported the newest version this code reads
   * @param document which document (`'session document "chat-1"'`, a file path)
   */
  constructor(
    readonly kind: string,
    readonly version: number,
    readonly supported: number,
    readonly document: string,
    options: BatonErrorOptions = {},
  ) {
    super(
      `The ${document} is a ${kind} of schemaVersion ${version}, but this version of @baton/core reads ${kind}s up to schemaVersion ${supported}: it was written by a newer Baton. Upgrade @baton/core (and the store package) to read it; it was not loaded.`,
      options,
    );
  }
}
