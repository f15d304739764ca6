import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError, StoreError } from '../../errors.js';
import type { FileEpisodeStore } from './fileEpisodeStore.js';
import { readDirNames } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';

/**
 * How `FileStore` runs each of its calls: the folders created on first use, a closed store
 * refused, and I/O failures wrapped as {@link StoreError}.
 */
export class FileStoreRunner {
  readonly #layout: FileLayout;
  readonly #episodes: FileEpisodeStore;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(layout: FileLayout, episodes: FileEpisodeStore) {
    this.#layout = layout;
    this.#episodes = episodes;
  }

  /** Runs one store call: creates the folders on first use, and wraps I/O failures as {@link StoreError}. */
  async run<T>(what: string, work: () => Promise<T>): Promise<T> {
    const directory = this.#layout.root;
    if (this.#closed)
      throw new StoreError(`The FileStore at ${directory} is closed; create a new FileStore to ${what}.`);
    try {
      this.#ready ??= this.#prepare();
      await this.#ready;
      return await work();
    } catch (error) {
      if (error instanceof BatonError) throw error;
      throw new StoreError(
        `FileStore could not ${what} under ${directory}: ${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      );
    }
  }

  /** Refuses every later call (see {@link run}). */
  close(): void {
    this.#closed = true;
  }

  async #prepare(): Promise<void> {
    const layout = this.#layout;
    try {
      for (const dir of [layout.sessionsDir, layout.episodesDir, layout.locksDir, layout.trashDir])
        await mkdir(dir, { recursive: true });
    } catch (error) {
      this.#ready = undefined; // let a later call retry (e.g. once the disk is writable)
      throw error;
    }
    // Sessions whose delete was interrupted after the rename.
    for (const name of await readDirNames(layout.trashDir))
      await rm(join(layout.trashDir, name), { recursive: true, force: true });
    await this.#episodes.ensureIndex();
  }
}
