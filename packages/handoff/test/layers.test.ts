import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The package's folders are layers (docs/architecture.md, "Inside packages/handoff"): imports point
 * down this order, bottom first, except the one upward arrow named below.
 */
const LAYERS = ['config', 'routing', 'runtime', 'turn', 'telemetry', 'session', 'workflow', 'inspect'] as const;

/** The one upward arrow allowed between folders, and the file that draws it (see docs/architecture.md). */
const ALLOWED_UPWARD = new Map([['turn -> workflow', 'turn/turnRunner.ts -> workflow/workflowExecutor.ts']]);

/** The code a turn runs through (`send`/`respond`/`resume` down to the store write): no function here is over 60 lines. */
const TURN_PATH_FOLDERS = ['runtime', 'turn', 'session'];
const TURN_PATH_FILES = ['telemetry/tracedTurn.ts'];
const MAX_FUNCTION_LINES = 60;

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path)] : [];
  });
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(src, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** Every relative import and re-export of `file` (type-only ones included), as paths under src. */
function importsOf(file: string): string[] {
  const imports: string[] = [];
  for (const statement of parse(file).statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    imports.push(relative(src, resolve(src, dirname(file), specifier.text.replace(/\.js$/, '.ts'))));
  }
  return imports;
}

const files = sourceFiles(src);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const layerOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : undefined);

/** One import cycle among the files, as a path that ends where it starts, or `undefined`. */
function findCycle(): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle !== undefined) return cycle;
      }
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    if (state.has(file)) continue;
    const cycle = visit(file);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe('packages/handoff folders are layers', () => {
  it('every import resolves to a file of the package', () => {
    const missing = [...graph].flatMap(([file, imports]) =>
      imports.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no import cycle between its files (type-only imports included)', () => {
    expect(findCycle()).toBeUndefined();
  });

  it('places every folder in the declared layer order', () => {
    const folders = new Set(files.map(layerOf).filter((layer) => layer !== undefined));
    expect([...folders].filter((folder) => !(LAYERS as readonly string[]).includes(folder))).toEqual([]);
  });

  it('has imports between folders point down the layers, except at most the one named upward arrow', () => {
    const upward = new Map<string, string[]>();
    for (const [file, imports] of graph) {
      for (const target of imports) {
        const from = layerOf(file);
        const to = layerOf(target);
        if (from === undefined || to === undefined || from === to) continue;
        if (LAYERS.indexOf(to as (typeof LAYERS)[number]) < LAYERS.indexOf(from as (typeof LAYERS)[number])) continue;
        const arrow = `${from} -> ${to}`;
        upward.set(arrow, [...(upward.get(arrow) ?? []), `${file} -> ${target}`]);
      }
    }
    expect(ALLOWED_UPWARD.size).toBeLessThanOrEqual(1);
    for (const [arrow, imports] of upward)
      expect({ arrow, imports }).toEqual({ arrow, imports: [ALLOWED_UPWARD.get(arrow)] });
  });
});

describe('the turn path', () => {
  const covered = files.filter(
    (file) => TURN_PATH_FOLDERS.includes(layerOf(file) ?? '') || TURN_PATH_FILES.includes(file),
  );

  it('covers the files a send runs through', () => {
    expect(covered).toEqual(
      expect.arrayContaining([
        'session/handoffSession.ts',
        'session/sessionOperations.ts',
        'telemetry/tracedTurn.ts',
        'turn/turnRunner.ts',
        'turn/bufferedJournal.ts',
        'runtime/checkpointer.ts',
        'runtime/storeWriter.ts',
        'runtime/sessionRuntime.ts',
      ]),
    );
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of covered) {
      const source = parse(file);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          const lines = last - first + 1;
          const name = node.name !== undefined ? node.name.getText(source) : '(anonymous)';
          if (lines > MAX_FUNCTION_LINES) long.push(`${file}: ${name} is ${lines} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });
});
