/**
 * Building FerretDB takes minutes, so `ensureFerretdbBinary` says on stderr when a build starts and
 * when it ends. Here the Go tool is `false` (a real program that fails at once), so the build fails
 * fast in a fresh cache dir and both lines, and the error naming the fix, can be checked.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test, vi } from 'vitest';
import { ensureFerretdbBinary, FERRETDB_VERSION } from './support/ferretdbBinary.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

test('a build prints one line when it starts and one with the seconds it took when it ends', async () => {
  const cacheDir = await mkdtemp(join(tmpdir(), 'baton-ferretdb-cache-'));
  vi.stubEnv('GO', 'false');
  const printed: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed.push(String(chunk));
    return true;
  });
  try {
    await expect(ensureFerretdbBinary(cacheDir)).rejects.toThrow(
      /Cannot download github\.com\/FerretDB\/FerretDB@v1\.24\.2 [\s\S]*Install Go ≥ 1\.24/,
    );
  } finally {
    vi.restoreAllMocks();
    await rm(cacheDir, { recursive: true, force: true });
  }
  expect(printed).toEqual([
    expect.stringMatching(new RegExp(`^Building FerretDB ${FERRETDB_VERSION} with Go into .+ for the MongoDB tests`)),
    expect.stringMatching(new RegExp(`^Building FerretDB ${FERRETDB_VERSION} failed after \\d+\\.\\d s\\.\\n$`)),
  ]);
});
