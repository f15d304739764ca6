import { describe, expect, it } from 'vitest';
import { InMemoryStore, InvalidInputError, type Session, SessionSchema } from '../src/index.js';
import { fastAcceptsNewSession } from '../src/store/sessionFastCheck.js';
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
        if (!['id', 'tenantId', 'userId'].includes(field)) expect(checkSession(session).ok, `${field} = samples[${index}]`).toBe(true);
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
    expect(good).toMatchObject({ id: 's-good', status: 'active', version: 1, metadata: { plan: 'pro' }, state: { n: 1 } });
  });
});
