import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  DEFAULT_PROVIDER_STATE_MAX_BYTES,
  InvalidInputError,
  ProviderStateTooLargeError,
  providerState,
  StateContainer,
} from '../src/index.js';

describe('providerState', () => {
  it("reads and changes only the provider's own slice, with patches of just the change", () => {
    const state = new StateContainer({ session: { verified: true }, branch: { plan: ['a'] } });
    const notes = providerState(state, { name: 'notes' });
    expect(notes.session).toEqual({});
    notes.update('branch', (draft) => {
      draft.entries = { first: 'x' };
    });
    notes.update('branch', (draft) => {
      (draft.entries as Record<string, string>).second = 'y';
    });
    notes.update('session', (draft) => {
      draft.count = 1;
    });
    expect(state.branch).toEqual({ plan: ['a'], 'provider:notes': { entries: { first: 'x', second: 'y' } } });
    expect(state.session).toEqual({ verified: true, 'provider:notes': { count: 1 } });
    expect(notes.branch).toEqual({ entries: { first: 'x', second: 'y' } });
    expect(Object.isFrozen(notes.branch)).toBe(true);
    // The second change is logged as the one entry it added, not the slice again.
    expect(state.patches.branch).toEqual([
      { op: 'add', path: ['provider:notes'], value: { entries: { first: 'x' } } },
      { op: 'add', path: ['provider:notes', 'entries', 'second'], value: 'y' },
    ]);
    // Another provider has its own slice.
    expect(providerState(state, { name: 'other' }).branch).toEqual({});
  });

  it('refuses a change that would pass the bound, and applies nothing of it', () => {
    const state = new StateContainer({ session: {}, branch: {} });
    const small = providerState(state, { name: 'small', maxStateBytes: 100 });
    small.update('branch', (draft) => {
      draft.text = 'short';
    });
    let error: unknown;
    try {
      small.update('branch', (draft) => {
        draft.text = 'x'.repeat(200);
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderStateTooLargeError);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', provider: 'small', scope: 'branch', maxBytes: 100 });
    expect((error as Error).message).toContain('"small"');
    expect(small.branch).toEqual({ text: 'short' });
    expect(state.patches.branch).toHaveLength(1);
    expect(DEFAULT_PROVIDER_STATE_MAX_BYTES).toBe(65_536);
  });

  it('refuses a name that cannot key state', () => {
    const state = new StateContainer({ session: {}, branch: {} });
    for (const name of ['', 'a.b', '$x']) expect(() => providerState(state, { name })).toThrow(ConfigurationError);
  });
});
