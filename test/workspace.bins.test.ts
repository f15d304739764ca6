/**
 * Every `bin` a workspace package declares is a committed, executable file with a shebang, so a fresh
 * `pnpm install` (before any build) links it without "WARN Failed to create bin" (a bin pointing
 * into `dist/` does not exist until the package is built). The packed `baton` command itself is run by
 * `readme.packed.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

test("every workspace package's bin is a committed executable file, not a build output", () => {
  // `git ls-files -s`: `<mode> <object> <stage>\t<path>` of every committed file.
  const committed = new Map(
    execFileSync('git', ['ls-files', '-s'], { cwd: root, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => {
        const [meta, path] = line.split('\t') as [string, string];
        return [path, meta.split(' ')[0]!] as const;
      }),
  );
  const manifests = [...committed.keys()].filter((path) => /^(packages|examples)\/[^/]+\/package\.json$/.test(path));
  const bins = manifests.flatMap((manifest) => {
    const { bin } = JSON.parse(readFileSync(join(root, manifest), 'utf8')) as { bin?: string | Record<string, string> };
    const targets = bin === undefined ? [] : typeof bin === 'string' ? [bin] : Object.values(bin);
    return targets.map((target) => join(manifest, '..', target));
  });
  expect(bins).toContain(join('packages', 'cli', 'bin', 'baton.js'));
  for (const bin of bins) {
    expect(committed.get(bin), `${bin} is committed as an executable file`).toBe('100755');
    expect(readFileSync(join(root, bin), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  }
});
