import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, FileStore, InMemoryStore, type Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';

/** The folder replays write to by default: `examples/support-desk/.data/replay` (gitignored). */
export const DEFAULT_STORE_DIR = fileURLToPath(new URL('../../.data/replay', import.meta.url));

/** The folder the chat keeps its sessions in by default: `examples/support-desk/.data/chat` (gitignored). */
export const DEFAULT_CHAT_STORE_DIR = fileURLToPath(new URL('../../.data/chat', import.meta.url));

// What a FileStore keeps at its root; a folder holding anything else is not cleared.
const FILE_STORE_ENTRIES = new Set(['sessions', 'episodes', 'locks', 'trash']);

/** Where a run keeps its sessions, and how to open, reset and measure it. */
export interface DeskStore {
  /** `'file'`, `'mongo'` or `'memory'`. */
  readonly kind: string;
  /** Where it is, for the report (a folder, a database name). */
  readonly location: string;
  /** Opens a store object: for files, a new object on the same data each time (as after a process restart). */
  open(): Promise<Store>;
  /** Whether `open()` gives a new object on the same data (true for files and MongoDB, false in memory). */
  readonly reopens: boolean;
  /** Removes what an earlier run of these sessions left, so runs are repeatable. */
  reset(sessionIds: readonly string[]): Promise<void>;
  /** Bytes the store holds now (files' sizes, each file once however many hard links it has; or MongoDB's `dataSize`); `undefined` when unknown. */
  bytes(): Promise<number | undefined>;
  /**
   * What {@link chooseDeskStore} was given: another thread (a replay worker) passes it to `chooseDeskStore` for a desk
   * store of its own on the same folder or database. An in-memory store cannot be shared this way (see `reopens`).
   */
  readonly options: DeskStoreOptions;
}

/** Options of {@link chooseDeskStore}: plain data, so that they can be sent to a worker thread. */
export interface DeskStoreOptions {
  /** The FileStore's folder (default {@link DEFAULT_STORE_DIR}), or `':memory:'`. */
  directory?: string;
  /** A MongoDB connection string; when given (and not empty), it wins over `directory`. */
  mongoUrl?: string | undefined;
  /** The MongoDB database (default `baton_support_desk`). */
  mongoDbName?: string;
}

/**
 * Chooses the store of a run: MongoDB when `mongoUrl` is given (database `mongoDbName`, default
 * `baton_support_desk`), otherwise a `FileStore` in `directory` (default {@link DEFAULT_STORE_DIR}),
 * or memory when `directory` is `':memory:'`. `reset` clears a FileStore folder only when it holds nothing but a
 * FileStore's own folders (it throws a `ConfigurationError` otherwise), and deletes only the named
 * sessions from MongoDB or memory.
 *
 * @example
 * ```ts
 * const deskStore = chooseDeskStore({ mongoUrl: process.env.MONGODB_URL });
 * const store = await deskStore.open();
 * ```
 */
export function chooseDeskStore(options: DeskStoreOptions = {}): DeskStore {
  const given = { ...options };
  if (options.mongoUrl !== undefined && options.mongoUrl !== '')
    return { ...mongoDeskStore(options.mongoUrl, options.mongoDbName ?? 'baton_support_desk'), options: given };
  if (options.directory === ':memory:') return { ...memoryDeskStore(), options: given };
  return { ...fileDeskStore(options.directory ?? DEFAULT_STORE_DIR), options: given };
}

function fileDeskStore(directory: string): Omit<DeskStore, 'options'> {
  return {
    kind: 'file',
    location: directory,
    reopens: true,
    open: async () => new FileStore({ directory }),
    reset: async () => {
      const foreign = (await readdir(directory).catch(() => [] as string[])).filter(
        (name) => !FILE_STORE_ENTRIES.has(name),
      );
      if (foreign.length > 0) {
        throw new ConfigurationError(
          `Refusing to clear ${directory}: it holds ${foreign
            .slice(0, 3)
            .map((n) => JSON.stringify(n))
            .join(', ')}, which a FileStore does not write. Pass --store-dir with an empty or new folder.`,
        );
      }
      await rm(directory, { recursive: true, force: true });
    },
    bytes: () => folderBytes(directory, new Set()),
  };
}

function memoryDeskStore(): Omit<DeskStore, 'options'> {
  const store = new InMemoryStore();
  return {
    kind: 'memory',
    location: 'memory',
    reopens: false,
    open: async () => store,
    reset: async (ids) => {
      for (const id of ids) await store.deleteSession(id);
    },
    bytes: async () => undefined,
  };
}

function mongoDeskStore(url: string, dbName: string): Omit<DeskStore, 'options'> {
  let shared: MongoStore | undefined;
  const get = async () => {
    if (shared === undefined) {
      shared = new MongoStore({ url }, { dbName });
      await shared.init();
    }
    return shared;
  };
  return {
    kind: 'mongo',
    location: `MongoDB database ${dbName}`,
    reopens: false,
    open: get,
    reset: async (ids) => {
      const store = await get();
      for (const id of ids) await store.deleteSession(id);
    },
    bytes: async () => {
      const stats = await (await get()).db.stats();
      return typeof stats.dataSize === 'number' ? stats.dataSize : undefined;
    },
  };
}

/** The size of the files under `directory`, each counted once: the FileStore indexes episodes by owner with hard links. */
async function folderBytes(directory: string, seen: Set<string>): Promise<number> {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path, seen);
    else if (entry.isFile()) {
      const info = await stat(path);
      const file = `${info.dev}:${info.ino}`;
      if (seen.has(file)) continue;
      seen.add(file);
      total += info.size;
    }
  }
  return total;
}
