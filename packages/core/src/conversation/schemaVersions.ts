/**
 * The versions of Baton's persisted formats and the one migration registry per kind that every
 * store reads through: a stored document names its format in `schemaVersion`; a loader brings an
 * older document up to the current version step by step (version n → n + 1) before it checks it
 * with today's schema, and refuses a newer one with {@link UnsupportedSchemaVersionError} rather
 * than misread it. A document without `schemaVersion` is version 1: sessions, branches, messages
 * and episodes were written without the field before version 2 (checkpoints always had it).
 *
 * How to add a version (docs in test/corpus/README.md): raise the kind's number in
 * {@link SCHEMA_VERSIONS}, add the step from the old number in `MIGRATIONS`, and add saved
 * documents of the new version to the corpus.
 */
import { UnsupportedSchemaVersionError } from '../errors.js';

/** The kinds of document Baton persists, each with its own `schemaVersion`. */
export type DocumentKind = 'session' | 'branch' | 'message' | 'episode' | 'checkpoint';

/**
 * The current `schemaVersion` of each kind: what stores write and what loaders migrate to.
 *
 * - session, branch, message, episode: 2 — version 2 is version 1 with the `schemaVersion` field
 *   itself (and, in MongoDB, the session's `tenantId` on message, branch, checkpoint and pending
 *   write documents, which `MongoStore` fills in when it opens a database of version 1)
 * - checkpoint: 1 — `CHECKPOINT_SCHEMA_VERSION`
 */
export const SCHEMA_VERSIONS = {
  session: 2,
  branch: 2,
  message: 2,
  episode: 2,
  checkpoint: 1,
} as const satisfies Record<DocumentKind, number>;

/** A plain stored document (parsed JSON or a database document). */
export type StoredDocument = Record<string, unknown>;

/**
 * One migration step: the fields of a document of version n turned into those of version n + 1
 * (without `schemaVersion`, which the registry handles). It never mutates its input; it may return
 * its input when the step changes no field.
 */
export type Migration = (fields: Readonly<StoredDocument>) => StoredDocument;

/** A kind's registry: its current version and the step from each older version n (the key) to n + 1. */
export interface MigrationRegistry {
  readonly current: number;
  readonly steps: Readonly<Record<number, Migration>>;
}

/** Version 2 only added `schemaVersion`: the fields of a version-1 document read unchanged. */
const addedSchemaVersion: Migration = (fields) => fields;

/** The step tables, one per kind. */
const MIGRATIONS: { readonly [K in DocumentKind]: MigrationRegistry } = {
  session: { current: SCHEMA_VERSIONS.session, steps: { 1: addedSchemaVersion } },
  branch: { current: SCHEMA_VERSIONS.branch, steps: { 1: addedSchemaVersion } },
  message: { current: SCHEMA_VERSIONS.message, steps: { 1: addedSchemaVersion } },
  episode: { current: SCHEMA_VERSIONS.episode, steps: { 1: addedSchemaVersion } },
  checkpoint: { current: SCHEMA_VERSIONS.checkpoint, steps: {} },
};

/** A document's `schemaVersion` as written: a whole number >= 1, `1` when absent, `undefined` when it is not a version. */
export function storedSchemaVersion(document: Readonly<StoredDocument>): number | undefined {
  const version = document.schemaVersion;
  if (version === undefined) return 1;
  return typeof version === 'number' && Number.isSafeInteger(version) && version >= 1 ? version : undefined;
}

/**
 * The fields of a stored document brought up to its kind's current version, one step at a time,
 * without `schemaVersion` (the shape the store API returns). No copy is made when the document has
 * no `schemaVersion` and no step changes a field.
 *
 * @param kind the document kind (for the error)
 * @param document the stored document (not mutated)
 * @param name names the document in errors (`'session document "chat-1"'`, a file path)
 * @param registry the kind's versions and steps (the built-in registry of `kind` by default)
 * @returns the current fields; `undefined` when `schemaVersion` is not a whole number >= 1 (the caller reports it as damage)
 * @throws {UnsupportedSchemaVersionError} when the document is newer than `registry.current`
 * @example
 * ```ts
 * import { migrateFields } from '@baton/core/store-kit';
 * migrateFields('session', JSON.parse(text), 'sessions/chat-1/session.json'); // { id: 'chat-1', … }
 * ```
 */
export function migrateFields(
  kind: DocumentKind,
  document: Readonly<StoredDocument>,
  name: string,
  registry: MigrationRegistry = MIGRATIONS[kind],
): StoredDocument | undefined {
  const version = storedSchemaVersion(document);
  if (version === undefined) return undefined;
  if (version > registry.current) throw new UnsupportedSchemaVersionError(kind, version, registry.current, name);
  let fields: StoredDocument = document;
  if ('schemaVersion' in document) {
    const { schemaVersion: _version, ...rest } = document;
    fields = rest;
  }
  for (let from = version; from < registry.current; from++) {
    const step = registry.steps[from];
    if (step === undefined)
      throw new Error(`Baton has no migration of ${kind} documents from schemaVersion ${from} to ${from + 1}.`);
    fields = step(fields);
  }
  return fields;
}

/**
 * A stored document brought up to its kind's current version, with `schemaVersion` set to it (see
 * {@link migrateFields}); the same object when it already is current.
 *
 * @returns the document at the current version; `undefined` when `schemaVersion` is not a whole number >= 1
 * @throws {UnsupportedSchemaVersionError} when the document is newer than `registry.current`
 * @example
 * ```ts
 * import { migrateDocument } from '@baton/core/store-kit';
 * migrateDocument('message', { id: 'm1', seq: 1, … }, 'line 1 of main.jsonl'); // { …, schemaVersion: 2 }
 * ```
 */
export function migrateDocument(
  kind: DocumentKind,
  document: Readonly<StoredDocument>,
  name: string,
  registry: MigrationRegistry = MIGRATIONS[kind],
): StoredDocument | undefined {
  if (document.schemaVersion === registry.current) return document;
  const fields = migrateFields(kind, document, name, registry);
  return fields === undefined ? undefined : { ...fields, schemaVersion: registry.current };
}

/**
 * A document as a store writes it: `schemaVersion` (the kind's current version) first, then the fields.
 *
 * @param kind the document kind
 * @param document the session, branch, message or episode
 * @returns a new object `{ schemaVersion, ...document }`
 * @example
 * ```ts
 * import { withSchemaVersion } from '@baton/core/store-kit';
 * await writeFile(path, JSON.stringify(withSchemaVersion('session', session)));
 * ```
 */
export function withSchemaVersion<T extends object>(kind: DocumentKind, document: T): T & { schemaVersion: number } {
  return { schemaVersion: SCHEMA_VERSIONS[kind], ...document };
}
