/**
 * Random damage to stored documents, for the byte-mutation fuzz tests of every store: fast-check
 * arbitraries of mutations (bit flips, byte deletion and insertion, truncation, duplicated keys,
 * swapped types, huge numbers, non-ISO timestamps, ids that fail the id rule, `__proto__` keys,
 * missing fields) and the function that applies one to a document's serialized text. A mutation
 * is a plain record, so fast-check prints and shrinks it when a property fails.
 */
import fc from 'fast-check';

/** How many runs per document type: `BATON_FUZZ_RUNS`, else `fallback` (the CI size). */
export function fuzzRuns(fallback = 200): number {
  const runs = Number(process.env.BATON_FUZZ_RUNS);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : fallback;
}

/**
 * The vitest timeout of a fuzz test that makes {@link fuzzRuns} runs, in ms: `msPerRun` per run, at
 * least 30 s. Such a test's time grows with its runs (`BATON_FUZZ_RUNS=1000` is five times the CI
 * size) and with the machine's load (each run does real file or database I/O: the MongoStore fuzz
 * took 30 s for 200 runs beside other work on 2 cores, 6-15 s in a quiet CI run; FileStore's format 1
 * branch documents, migrated on each new store's open, took over 100 s for 200 runs at load average 15);
 * the timeout only has to catch a run that hangs.
 */
export function fuzzTimeoutMs(msPerRun = 2000): number {
  return Math.max(30_000, fuzzRuns() * msPerRun);
}

/** The seed of every fuzz property (`BATON_FUZZ_SEED` to try another). */
export function fuzzSeed(): number {
  const seed = Number(process.env.BATON_FUZZ_SEED);
  return Number.isSafeInteger(seed) ? seed : 20_251_123;
}

/** One mutation of a document's text; `at` and `path` pick a place (taken modulo what the document has). */
export type Mutation =
  | { kind: 'flipBit'; at: number; bit: number }
  | { kind: 'deleteBytes'; at: number; count: number }
  | { kind: 'insertBytes'; at: number; bytes: number[] }
  | { kind: 'truncate'; at: number }
  | { kind: 'duplicateBytes'; at: number; count: number }
  | { kind: 'duplicateKey'; path: number; value: unknown }
  | { kind: 'replaceValue'; path: number; value: unknown }
  | { kind: 'deleteField'; path: number }
  | { kind: 'addField'; path: number; key: string; value: unknown }
  | { kind: 'protoKey'; path: number; key: '__proto__' | 'constructor' | 'prototype' };

/** Values that break types and ranges: swapped types, huge and odd numbers, non-ISO timestamps, bad ids. */
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
  '',
  ' ',
  'x',
  [],
  [null],
  {},
  { $gt: '' },
  { nested: { deeper: [1, 'two', null] } },
  'yesterday',
  '2025-01-01',
  '2025-01-01 12:00:00',
  '2025-01-01T12:00:00+02:00',
  '2025-02-30T00:00:00.000Z',
  '1735732800000',
  'Wed, 01 Jan 2025 12:00:00 GMT',
  '../x',
  'a/b',
  '.hidden',
  '-dash',
  '$gt',
  'main\u0000',
  'x'.repeat(200),
  'user',
  'assistant',
  'closed',
  'handoff',
];

/** A hostile value (see above) or a random JSON value. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** Bytes a JSON parser trips on or that change meaning. */
const nastyByte = fc.oneof(
  fc.constantFrom(0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x5c, 0x0a, 0x00, 0xff, 0xc3, 0x30, 0x39, 0x2d, 0x65, 0x20),
  fc.integer({ min: 0, max: 255 }),
);

/** Any one {@link Mutation}. */
export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flipBit' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('deleteBytes' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 12 }) }),
  fc.record({
    kind: fc.constant('insertBytes' as const),
    at: fc.nat(),
    bytes: fc.array(nastyByte, { minLength: 1, maxLength: 6 }),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicateBytes' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('duplicateKey' as const), path: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant('replaceValue' as const), path: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant('deleteField' as const), path: fc.nat() }),
  fc.record({
    kind: fc.constant('addField' as const),
    path: fc.nat(),
    key: fc.constantFrom('extra', '$set', 'a.b', '', '_id'),
    value: hostileValue,
  }),
  fc.record({
    kind: fc.constant('protoKey' as const),
    path: fc.nat(),
    key: fc.constantFrom('__proto__' as const, 'constructor' as const, 'prototype' as const),
  }),
);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every place in a JSON value: its path from the root (the root itself is `[]`). */
function places(value: Json, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(path);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) places(item, [...path, index], out);
  } else if (value !== null && typeof value === 'object')
    for (const [key, child] of Object.entries(value)) places(child, [...path, key], out);
  return out;
}

function parentOf(root: Json, path: (string | number)[]): Json {
  let node = root;
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, Json>)[step] as Json;
  return node;
}

/** The objects of a document (where keys can be added), as paths. */
function objectPlaces(root: Json): (string | number)[][] {
  return places(root).filter((path) => {
    const node = path.reduce<Json>((n, step) => (n as Record<string | number, Json>)[step] as Json, root);
    return node !== null && typeof node === 'object' && !Array.isArray(node);
  });
}

function nodeAt(root: Json, path: (string | number)[]): Json {
  return path.reduce<Json>((n, step) => (n as Record<string | number, Json>)[step] as Json, root);
}

/** `{"k":v}` text with `extra` spliced in before the object's closing brace (so its key comes last and wins). */
function withTrailingMember(objectText: string, extra: string): string {
  const body = objectText.slice(0, -1);
  return `${body}${body.length > 1 ? ',' : ''}${extra}}`;
}

/** Serialises `root`, with the object at `target` rewritten by `rewrite` (text level, so duplicate and `__proto__` keys survive). */
function stringifyWith(root: Json, target: (string | number)[], rewrite: (objectText: string) => string): string {
  const walk = (node: Json, path: (string | number)[]): string => {
    const here = path.length === target.length && path.every((step, index) => step === target[index]);
    let text: string;
    if (Array.isArray(node)) text = `[${node.map((item, index) => walk(item, [...path, index])).join(',')}]`;
    else if (node !== null && typeof node === 'object')
      text = `{${Object.entries(node)
        .map(([key, child]) => `${JSON.stringify(key)}:${walk(child, [...path, key])}`)
        .join(',')}}`;
    else text = JSON.stringify(node);
    return here ? rewrite(text) : text;
  };
  return walk(root, []);
}

/** Applies a structural mutation to one JSON text; `undefined` when the text is not JSON (then nothing applies). */
function mutateJson(
  text: string,
  mutation: Exclude<Mutation, { kind: 'flipBit' | 'deleteBytes' | 'insertBytes' | 'truncate' | 'duplicateBytes' }>,
): string | undefined {
  let root: Json;
  try {
    root = JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
  const valueText = (value: unknown): string => JSON.stringify(value) ?? 'null';
  switch (mutation.kind) {
    case 'replaceValue': {
      const all = places(root);
      const path = all[mutation.path % all.length]!;
      if (path.length === 0) return valueText(mutation.value);
      (parentOf(root, path) as Record<string | number, unknown>)[path.at(-1)!] = mutation.value;
      return JSON.stringify(root);
    }
    case 'deleteField': {
      const all = places(root).filter((path) => path.length > 0);
      if (all.length === 0) return undefined;
      const path = all[mutation.path % all.length]!;
      const parent = parentOf(root, path);
      if (Array.isArray(parent)) parent.splice(path.at(-1) as number, 1);
      else delete (parent as Record<string, Json>)[path.at(-1) as string];
      return JSON.stringify(root);
    }
    case 'duplicateKey': {
      const members = places(root).filter((path) => typeof path.at(-1) === 'string');
      if (members.length === 0) return undefined;
      const path = members[mutation.path % members.length]!;
      const key = path.at(-1) as string;
      return stringifyWith(root, path.slice(0, -1), (objectText) =>
        withTrailingMember(objectText, `${JSON.stringify(key)}:${valueText(mutation.value)}`),
      );
    }
    case 'addField':
    case 'protoKey': {
      const objects = objectPlaces(root);
      if (objects.length === 0) return undefined;
      const path = objects[mutation.path % objects.length]!;
      const member =
        mutation.kind === 'addField'
          ? `${JSON.stringify(mutation.key)}:${valueText(mutation.value)}`
          : `${JSON.stringify(mutation.key)}:{"polluted":true,"id":"../x"}`;
      if (nodeAt(root, path) === null) return undefined;
      return stringifyWith(root, path, (objectText) => withTrailingMember(objectText, member));
    }
  }
}

/**
 * Applies a mutation to a document's serialized text. Byte mutations work on the UTF-8 bytes of the
 * whole text (a JSON Lines file included); structural ones on one JSON value: the whole text, or for
 * JSON Lines one complete line (`line` picks it).
 *
 * @returns the damaged bytes (for a file) — decode with `toString('utf8')` for a database document
 */
export function applyMutation(text: string, mutation: Mutation, line = 0): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const size = Math.max(bytes.length, 1);
  switch (mutation.kind) {
    case 'flipBit': {
      const out = Buffer.from(bytes);
      const at = mutation.at % size;
      if (out.length > 0) out[at] = out[at]! ^ (1 << mutation.bit);
      return out;
    }
    case 'deleteBytes': {
      const at = mutation.at % size;
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + mutation.count)]);
    }
    case 'insertBytes': {
      const at = mutation.at % (bytes.length + 1);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(mutation.bytes), bytes.subarray(at)]);
    }
    case 'truncate':
      return bytes.subarray(0, mutation.at % size);
    case 'duplicateBytes': {
      const at = mutation.at % size;
      const slice = bytes.subarray(at, at + mutation.count);
      return Buffer.concat([bytes.subarray(0, at + slice.length), slice, bytes.subarray(at + slice.length)]);
    }
    default: {
      const lines = text.split('\n');
      const complete = lines.length > 1 ? lines.slice(0, -1) : lines;
      const index = line % complete.length;
      const mutated = mutateJson(complete[index]!, mutation);
      if (mutated === undefined) return bytes;
      lines[index] = mutated;
      return Buffer.from(lines.join('\n'), 'utf8');
    }
  }
}

/** A mutation and the line it aims at (for JSON Lines files). */
export interface AimedMutation {
  mutation: Mutation;
  line: number;
}

/** Any mutation, aimed at any line. */
export const aimedMutationArbitrary: fc.Arbitrary<AimedMutation> = fc.record({
  mutation: mutationArbitrary,
  line: fc.nat(),
});

/** Error classes a read must never let out (directly or as the cause of a Baton error): they mean a bug, not damage. */
const BUG_ERRORS = [TypeError, RangeError, ReferenceError];

/**
 * What a read of a damaged document did. `'bug'` means it failed with a non-Baton error, or with a
 * Baton error that wraps a TypeError, RangeError or ReferenceError.
 */
export type ReadOutcome =
  | { kind: 'value'; value: unknown }
  | { kind: 'batonError'; name: string }
  | { kind: 'bug'; error: unknown };

/** Runs a read and classifies how it ended (see {@link ReadOutcome}). */
export async function readOutcome(
  read: () => Promise<unknown>,
  isBatonError: (error: unknown) => boolean,
): Promise<ReadOutcome> {
  try {
    return { kind: 'value', value: await read() };
  } catch (error) {
    if (!isBatonError(error)) return { kind: 'bug', error };
    for (
      let cause: unknown = (error as Error).cause;
      cause !== undefined && cause !== null;
      cause = (cause as Error).cause
    ) {
      if (BUG_ERRORS.some((type) => cause instanceof type)) return { kind: 'bug', error };
    }
    return { kind: 'batonError', name: (error as Error).name };
  }
}

/** Counts outcomes per document type, for the figures a fuzz run prints. */
export class FuzzTally {
  readonly #counts = new Map<string, Map<string, number>>();

  /** Counts one outcome of `type` (`'value'`, `'not found'`, an error class name, …). */
  add(type: string, outcome: string): void {
    const counts = this.#counts.get(type) ?? new Map<string, number>();
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    this.#counts.set(type, counts);
  }

  /** One line per type: `type: N runs (outcome a, outcome b, …)`. */
  lines(): string[] {
    return [...this.#counts].map(
      ([type, counts]) => `${type}: ${[...counts].map(([outcome, count]) => `${outcome} ${count}`).join(', ')}`,
    );
  }
}
