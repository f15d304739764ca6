import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * Real temp folders for FileStore tests, removed after each test. Call once at the top of a test
 * file; use the returned function inside tests.
 */
export function useTempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), `baton-${prefix}-`));
    made.push(dir);
    return dir;
  };
}
