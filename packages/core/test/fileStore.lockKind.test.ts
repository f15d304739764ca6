/**
 * Which lock a FileStore takes across processes, and what it says when it cannot take the one asked
 * for. The kernel lock needs `fs-native-extensions`' native build: a child process in which that
 * module does not load (a preload makes `require` of it throw, as on a platform without a build)
 * takes the folder lock when `lock` is unset, and refuses `lock: 'kernel'` with `ConfigurationError`.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, FileStore } from '../src/index.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-lock-kind');
const source = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** Runs `body` (an ES module's code, with `FileStore` and `directory` in scope) in a process where `fs-native-extensions` does not load; its stdout. */
async function withoutNativeBuild(directory: string, body: string): Promise<string> {
  const preload = join(directory, 'no-native-build.cjs');
  await writeFile(
    preload,
    `const Module = require('node:module');
     const load = Module._load;
     Module._load = function (request, ...rest) {
       if (request === 'fs-native-extensions') throw new Error('no native build of fs-native-extensions for this platform');
       return load.call(this, request, ...rest);
     };`,
  );
  const script = `const { FileStore } = await import(${JSON.stringify(source)});
    const directory = ${JSON.stringify(join(directory, 'store'))};
    ${body}`;
  // execFile rejects when the child exits with another code than 0, with its stderr in the error.
  const { stdout, stderr } = await run(
    process.execPath,
    ['--require', preload, '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: repoRoot },
  );
  expect(stderr).toBe('');
  return stdout.trim();
}

describe('FileStore lock kind', () => {
  it('takes the kernel lock by default where it loads, the folder lock when asked, and refuses a lock it does not know', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    expect(store.lock).toBe('kernel');
    expect(new FileStore({ directory, lock: 'kernel' }).lock).toBe('kernel');
    const folder = new FileStore({ directory, lock: 'folder' });
    expect(folder.lock).toBe('folder');
    await folder.createSession({ id: 's' });
    await folder.appendMessages('s', 'main', [makeMessage(1)]);
    expect(await store.readMessages('s', 'main')).toHaveLength(1);
    expect(() => new FileStore({ directory, lock: 'fcntl' as 'kernel' })).toThrow(ConfigurationError);
    expect(() => new FileStore({ directory, lock: 'fcntl' as 'kernel' })).toThrow(/'kernel' or 'folder'.*"fcntl"/);
  });

  it('where the native build does not load: the folder lock when lock is unset, ConfigurationError for lock: kernel', async () => {
    const directory = await tempDir();
    const out = await withoutNativeBuild(
      directory,
      `const store = new FileStore({ directory });
       await store.createSession({ id: 's' });
       console.log(JSON.stringify({ lock: store.lock, session: (await store.getSession('s'))?.id }));
       try {
         new FileStore({ directory, lock: 'kernel' });
         console.log(JSON.stringify({ threw: false }));
       } catch (error) {
         console.log(JSON.stringify({ threw: error.name, message: error.message, cause: error.cause?.message }));
       }`,
    );
    const [opened, refused] = out.split('\n').map((line) => JSON.parse(line));
    expect(opened).toEqual({ lock: 'folder', session: 's' });
    expect(refused).toMatchObject({
      threw: 'ConfigurationError',
      cause: 'no native build of fs-native-extensions for this platform',
    });
    expect(refused.message).toMatch(
      /lock: 'kernel' needs the native build of fs-native-extensions.*Pass lock: 'folder'/,
    );
  }, 30_000);
});
