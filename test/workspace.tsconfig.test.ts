/**
 * The root tsconfig.json is a solution for the whole workspace: it references every workspace
 * folder that has a tsconfig.json (so `npx tsc -b` and editors see all of them), and each of those
 * is composite, as `tsc -b` requires, and type-check only.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A tsconfig file's JSON (comments allowed, as tsc reads it). */
function readTsconfig(path: string): {
  references?: { path: string }[];
  compilerOptions?: Record<string, unknown>;
  files?: string[];
} {
  const { config, error } = ts.readConfigFile(path, ts.sys.readFile);
  if (error !== undefined) throw new Error(`${path}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  return config;
}

/** The workspace folders of pnpm-workspace.yaml (`dir/*` globs and plain folders) that have a tsconfig.json. */
async function workspaceProjects(): Promise<string[]> {
  const yaml = await readFile(join(root, 'pnpm-workspace.yaml'), 'utf8');
  // The items of the top-level `packages:` list, up to the next top-level key.
  const section = /^packages:\n((?:[ \t]+.*\n?)*)/m.exec(yaml)?.[1] ?? '';
  const patterns = [...section.matchAll(/^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/gm)].map((m) => m[1]!);
  expect(patterns.length, 'pnpm-workspace.yaml lists packages').toBeGreaterThan(0);
  const folders = patterns.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
      : [pattern],
  );
  return folders.filter((folder) => existsSync(join(root, folder, 'tsconfig.json'))).sort();
}

test('the root tsconfig.json references every workspace project with a tsconfig.json, and compiles nothing itself', async () => {
  const solution = readTsconfig(join(root, 'tsconfig.json'));
  expect(solution.files).toEqual([]);
  const referenced = (solution.references ?? []).map((reference) => reference.path).sort();
  expect(referenced).toEqual(await workspaceProjects());
});

test('each referenced project is composite and emits nothing (dist builds use tsconfig.build.json)', async () => {
  for (const folder of await workspaceProjects()) {
    const options = readTsconfig(join(root, folder, 'tsconfig.json')).compilerOptions ?? {};
    expect({ folder, composite: options.composite, noEmit: options.noEmit }).toEqual({
      folder,
      composite: true,
      noEmit: true,
    });
  }
});
