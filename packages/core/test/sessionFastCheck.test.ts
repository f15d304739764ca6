import { describe, expect, it } from 'vitest';
import { BranchSchema, InMemoryStore, InvalidInputError, type Session, SessionSchema } from '../src/index.js';
import { fastAcceptsNewSession, fastStoredBranch, fastStoredSession } from '../src/store/sessionFastCheck.js';
import { checkSession } from '../src/store/storedDocuments.js';

const fresh: Session = {
  id: 's-1',
  status: 'active',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastActivityAt: '2026-01-01T00:00:00.000Z',
  metadata: { plan: 'pro' },
  state: { verified: true },
  version: 1,
};

/** Values to try in each field: valid ones, edge cases and wrong types. */
const samples: unknown[] = [
  undefined,
  null,
  '',
  's-2',
  0,
  1,
  2,
  1.5,
  Number.NaN,
  true,
  'active',
  'closed',
  'paused',
  '2026-01-01T00:00:00.000Z',
  '2026-02-30T00:00:00Z',
  'yesterday',
  [],
  {},
  { a: 1 },
  Object.create(null),
  new Date(0),
  new Map(),
];

describe('fastAcceptsNewSession', () => {
  it('accepts a new session as newSession builds it', () => {
    expect(fastAcceptsNewSession(fresh)).toBe(true);
    expect(fastAcceptsNewSession({ ...fresh, tenantId: 't-1', userId: 'u-1' })).toBe(true);
  });

  it('never accepts what the schema refuses: every field set to every sample value', () => {
    let accepted = 0;
    for (const field of Object.keys(SessionSchema.shape)) {
      for (const [index, value] of samples.entries()) {
        const session = { ...fresh, [field]: value } as Session;
        if (value === undefined) delete (session as Record<string, unknown>)[field];
        if (!fastAcceptsNewSession(session)) continue;
        accepted += 1;
        expect(SessionSchema.safeParse(session).success, `${field} = samples[${index}]`).toBe(true);
        // Ids and metadata keys are asserted by newSession before the check (its other rules).
        if (!['id', 'tenantId', 'userId'].includes(field))
          expect(checkSession(session).ok, `${field} = samples[${index}]`).toBe(true);
      }
    }
    expect(accepted).toBeGreaterThan(10);
  });

  it('leaves bad input to zod, whose message names the field; nothing is stored', async () => {
    const store = new InMemoryStore();
    const created = store.createSession({ id: 's-bad', createdAt: '2026-02-30T00:00:00Z' });
    await expect(created).rejects.toThrow(InvalidInputError);
    await expect(store.createSession({ id: 's-bad', createdAt: '2026-02-30T00:00:00Z' })).rejects.toThrow(/createdAt/);
    expect(await store.getSession('s-bad')).toBeUndefined();
    const good = await store.createSession({ id: 's-good', metadata: { plan: 'pro' }, state: { n: 1 } });
    expect(good).toMatchObject({
      id: 's-good',
      status: 'active',
      version: 1,
      metadata: { plan: 'pro' },
      state: { n: 1 },
    });
  });
});

/** Records with the shapes zod treats specially: `__proto__`, `constructor`, symbol and non-enumerable keys, a null prototype. */
function oddRecords(): unknown[] {
  const hidden = { shown: 1 };
  Object.defineProperty(hidden, 'hidden', { value: 2, enumerable: false });
  const nullProto = Object.assign(Object.create(null), { a: 1 });
  return [
    JSON.parse('{"__proto__":{"polluted":true},"a":1}'),
    { constructor: 'x' },
    { [Symbol('s')]: 1 },
    hidden,
    nullProto,
    { nested: { deep: [1, { x: null }] } },
    { '0': 'numeric key', 'a.b': 1, $x: 2 },
  ];
}

/**
 * The fast read of a stored document must give exactly what zod gives, or leave it to zod: every
 * field set to every sample value (and each record to each odd record), with unknown keys beside.
 */
function expectSameAsZod(
  name: string,
  base: Record<string, unknown>,
  schema: typeof SessionSchema | typeof BranchSchema,
  fast: (value: unknown) => unknown,
): number {
  let fastCount = 0;
  const values = [...samples, ...oddRecords()];
  for (const field of [...Object.keys(schema.shape), '_id', 'order', 'tenantIdOfDocument']) {
    for (const [index, value] of values.entries()) {
      const doc: Record<string, unknown> = { ...base, _id: 'x', order: 7, [field]: value };
      if (value === undefined && index % 2 === 0) delete doc[field];
      const quick = fast(doc);
      if (quick === undefined) continue;
      fastCount += 1;
      const parsed = schema.safeParse(doc);
      const where = `${name}.${field} = values[${index}]`;
      expect(parsed.success, where).toBe(true);
      expect(quick, where).toStrictEqual(parsed.data);
      expect(Object.keys(quick as object), where).toStrictEqual(Object.keys(parsed.data as object));
      for (const record of ['metadata', 'state']) {
        const got = (quick as Record<string, unknown>)[record];
        if (got !== undefined) {
          expect(got, where).not.toBe(doc[record]);
          expect(Object.getPrototypeOf(got), where).toBe(
            Object.getPrototypeOf((parsed.data as Record<string, unknown>)[record]),
          );
        }
      }
    }
  }
  return fastCount;
}

describe('fastStoredSession and fastStoredBranch', () => {
  it('give exactly what zod gives for a stored session, or leave it to zod', () => {
    const stored = {
      ...fresh,
      tenantId: 't-1',
      userId: 'u-1',
      status: 'closed',
      closedAt: '2026-01-02T00:00:00.000Z',
      closedReason: 'done',
      version: 9,
    };
    expect(fastStoredSession(stored)).toStrictEqual(SessionSchema.parse(stored));
    expect(expectSameAsZod('session', stored, SessionSchema, fastStoredSession)).toBeGreaterThan(50);
    expect(expectSameAsZod('session', { ...fresh }, SessionSchema, fastStoredSession)).toBeGreaterThan(50);
  });

  it('give exactly what zod gives for a stored branch, with or without a parent, or leave it to zod', () => {
    const main = { id: 'main', sessionId: 's-1', createdAt: '2026-01-01T00:00:00.000Z', state: { a: 1 }, version: 3 };
    const fork = { ...main, id: 'b-1', parent: { branchId: 'main', atSeq: 4, extra: true } };
    expect(fastStoredBranch(fork)).toStrictEqual(BranchSchema.parse(fork));
    expect(expectSameAsZod('branch', main, BranchSchema, fastStoredBranch)).toBeGreaterThan(30);
    expect(expectSameAsZod('fork', fork, BranchSchema, fastStoredBranch)).toBeGreaterThan(30);
    for (const parent of [
      null,
      [],
      { branchId: 'main' },
      { branchId: 'main', atSeq: -1 },
      { branchId: 1, atSeq: 0 },
      'main',
    ]) {
      expect(fastStoredBranch({ ...main, parent })).toBeUndefined();
    }
  });

  it('refuse a stored session the rules refuse, through checkSession, with the field named', () => {
    expect(checkSession({ ...fresh, id: '../x' })).toMatchObject({ ok: false, field: 'id' });
    expect(checkSession({ ...fresh, state: { $set: 1 } })).toMatchObject({ ok: false, field: 'state' });
    expect(checkSession({ ...fresh, version: 0 })).toMatchObject({ ok: false, field: 'version' });
  });
});
