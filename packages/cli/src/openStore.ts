import { resolve } from 'node:path';
import { FileStore, InvalidInputError, type Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** The MongoDB database (default: the url's path, else `'baton'`). */
  dbName?: string;
  /** The MongoDB collection prefix (default `'baton_'`, MongoStore's). */
  collectionPrefix?: string;
  /** Where a relative `file:` folder is resolved from (default `process.cwd()`). */
  cwd?: string;
}

/**
 * Opens the store a `--store` value names: `file:DIR` (a `FileStore` over that folder) or a
 * `mongodb://…` / `mongodb+srv://…` url (a `MongoStore`; the database is the url's path unless
 * `dbName` is given). The caller closes it.
 *
 * @throws {InvalidInputError} for any other value (the message quotes it and shows both forms)
 * @example
 * ```ts
 * const store = openStore('file:./examples/support-desk/.data/replay');
 * ```
 */
export function openStore(spec: string, options: OpenStoreOptions = {}): Store {
  if (spec.startsWith('file:')) {
    const directory = spec.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (directory === '')
      throw new InvalidInputError(`--store ${JSON.stringify(spec)} names no folder; write file:DIR, e.g. file:./data.`);
    return new FileStore({ directory: resolve(options.cwd ?? process.cwd(), directory) });
  }
  if (spec.startsWith('mongodb://') || spec.startsWith('mongodb+srv://')) {
    const dbName = options.dbName ?? databaseOf(spec) ?? 'baton';
    const mongoOptions =
      options.collectionPrefix === undefined ? { dbName } : { dbName, collectionPrefix: options.collectionPrefix };
    return new MongoStore({ url: spec }, mongoOptions);
  }
  throw new InvalidInputError(
    `--store ${JSON.stringify(spec)} is neither file:DIR nor a mongodb:// url; e.g. --store file:./data or --store mongodb://127.0.0.1:27017/support.`,
  );
}

/** The database a MongoDB url names in its path (`mongodb://host/support?…` → `support`), if any. */
function databaseOf(url: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(url);
  return match?.[1] === undefined || match[1] === '' ? undefined : decodeURIComponent(match[1]);
}
