import { applyPatches, type Draft, type Patch, produceWithPatches } from 'immer';
import { ConfigurationError, InvalidInputError } from '../errors.js';
import type { State } from './session.js';
import type { StateAccess, StateScope } from './state.js';

/** The key of session or branch state under which provider `name` keeps its slice: `provider:<name>`. */
export const PROVIDER_STATE_PREFIX = 'provider:';

/** The default bound of one provider's slice of one scope, in bytes of its JSON (UTF-8): 64 KiB. */
export const DEFAULT_PROVIDER_STATE_MAX_BYTES = 64 * 1024;

/**
 * A context provider's own slice of the session's state, as its hooks see it: `session` is shared
 * by all branches, `branch` belongs to the branch the turn runs on. Both live in the session and
 * branch documents under the key `provider:<name>`, so the store keeps them, checkpoints carry their
 * changes (immer patches), a fork starts from the branch slice as of its fork point, and deleting
 * or erasing the session deletes them. Reads are frozen snapshots (`{}` before the first write).
 */
export interface ProviderState {
  /** The provider's session-scoped slice (a frozen snapshot; change it with `update`). */
  readonly session: Readonly<State>;
  /** The provider's slice of the current branch's state (a frozen snapshot; change it with `update`). */
  readonly branch: Readonly<State>;
  /**
   * Changes the provider's slice through an immer recipe; nothing else of the state is reachable.
   * @throws {ProviderStateTooLargeError} when the slice would exceed its bound (nothing is changed)
   * @example
   * ```ts
   * state.update('branch', (draft) => { draft.lastSeen = 12; });
   * ```
   */
  update(scope: StateScope, recipe: (draft: Draft<State>) => void): void;
}

/**
 * A provider's slice of state would exceed its bound ({@link DEFAULT_PROVIDER_STATE_MAX_BYTES}, or
 * the provider's `maxStateBytes`). The change was not applied. An `InvalidInputError` (code `INVALID_INPUT`).
 */
export class ProviderStateTooLargeError extends InvalidInputError {
  /**
   * @param provider the provider's name
   * @param scope the slice's scope
   * @param bytes the slice's size after the refused change, in bytes of JSON
   * @param maxBytes its bound
   */
  constructor(
    readonly provider: string,
    readonly scope: StateScope,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `Context provider ${JSON.stringify(provider)}'s ${scope} state would be ${bytes} bytes, ` +
        `over its bound of ${maxBytes}; the change was not applied. ` +
        "Keep less in it, or raise the provider's maxStateBytes.",
    );
  }
}

const EMPTY: Readonly<State> = Object.freeze({});

/**
 * The slice of `state` owned by `provider` (see {@link ProviderState}). A view: it reads and
 * changes `state` itself, and every change is one immer change of the underlying state, so its
 * patches are what a checkpoint stores.
 *
 * @param state the session's state as the runtime holds it (e.g. a `StateContainer`)
 * @param provider the provider's `name` and, optionally, `maxStateBytes`
 *   (default {@link DEFAULT_PROVIDER_STATE_MAX_BYTES})
 * @returns the provider's view
 * @throws {ConfigurationError} when the name cannot be a state key (empty, starting with `$`, holding `.`)
 * @example
 * ```ts
 * import { providerState, StateContainer } from '@baton/core';
 * const state = new StateContainer({ session: {}, branch: {} });
 * providerState(state, { name: 'notes' }).update('branch', (draft) => { draft.count = 1; });
 * state.branch; // { 'provider:notes': { count: 1 } }
 * ```
 */
export function providerState(
  state: StateAccess,
  provider: { readonly name: string; readonly maxStateBytes?: number },
): ProviderState {
  const { name } = provider;
  if (name === '' || name.startsWith('$') || name.includes('.') || name.includes('\0')) {
    throw new ConfigurationError(
      `Context provider name ${JSON.stringify(name)} cannot key its state: ` +
        'use a non-empty name without "." that does not start with "$".',
    );
  }
  const key = `${PROVIDER_STATE_PREFIX}${name}`;
  const maxBytes = provider.maxStateBytes ?? DEFAULT_PROVIDER_STATE_MAX_BYTES;
  const slice = (scope: StateScope): Readonly<State> => {
    const value = state[scope][key];
    return isRecord(value) ? value : EMPTY;
  };
  return {
    get session() {
      return slice('session');
    },
    get branch() {
      return slice('branch');
    },
    update(scope, recipe) {
      const [next, patches] = produceWithPatches(slice(scope), recipe);
      if (patches.length === 0) return;
      const bytes = Buffer.byteLength(JSON.stringify(next));
      if (bytes > maxBytes) throw new ProviderStateTooLargeError(name, scope, bytes, maxBytes);
      // The recipe's patches, replayed on the slice inside one change of the whole state: fine-grained
      // patches (an added entry, not the whole slice again) for the checkpoint and the message log.
      state.update(scope, (draft) => {
        const current = draft[key];
        if (isRecord(current)) applyPatches(current as Draft<State>, patches as Patch[]);
        else draft[key] = next;
      });
    },
  };
}

function isRecord(value: unknown): value is State {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
