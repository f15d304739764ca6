import { applyPatches, enablePatches, type Draft, type Patch, produceWithPatches } from 'immer';
import type { StatePatch } from './checkpoint.js';
import type { State } from './session.js';

enablePatches();

/** Which state a change touches: the session's (shared by all branches) or the current branch's. */
export type StateScope = 'session' | 'branch';

/**
 * Session- and branch-scoped state as tools and context providers see it. Reads are frozen
 * snapshots; every change goes through immer's `produceWithPatches`, so it yields patches that a
 * checkpoint stores and a resume re-applies.
 */
export interface StateAccess {
  /** The session-scoped state, shared by all branches (a frozen snapshot; change it with `update`). */
  readonly session: Readonly<State>;
  /** The current branch's state (a frozen snapshot; change it with `update`). */
  readonly branch: Readonly<State>;
  /**
   * Changes state through an immer recipe.
   * @example
   * ```ts
   * state.update('session', (draft) => { draft.verifiedIdentity = true; });
   * ```
   */
  update(scope: StateScope, recipe: (draft: Draft<State>) => void): void;
}

/**
 * Holds the state of one session and branch during a turn and records the patches of each change
 * (a delta, never a copy). See immer's patches: https://immerjs.github.io/immer/patches
 *
 * @example
 * ```ts
 * import { StateContainer } from '@baton/core';
 * const state = new StateContainer({ session: {}, branch: {} });
 * state.update('branch', (draft) => { draft.step = 2; });
 * state.patches.branch; // [{ op: 'add', path: ['step'], value: 2 }]
 * ```
 */
export class StateContainer implements StateAccess {
  #session: State;
  #branch: State;
  /** The immer patches of every change since the last `clearPatches()`, per scope, oldest first. */
  readonly patches: { session: StatePatch[]; branch: StatePatch[] } = { session: [], branch: [] };

  constructor(initial: { session: State; branch: State }) {
    this.#session = initial.session;
    this.#branch = initial.branch;
  }

  get session(): Readonly<State> {
    return this.#session;
  }

  get branch(): Readonly<State> {
    return this.#branch;
  }

  update(scope: StateScope, recipe: (draft: Draft<State>) => void): void {
    const [next, patches] = produceWithPatches(scope === 'session' ? this.#session : this.#branch, recipe);
    if (scope === 'session') this.#session = next;
    else this.#branch = next;
    this.patches[scope].push(...(patches as StatePatch[]));
  }

  /** Re-applies patches saved in a checkpoint (on resume). */
  apply(patches: { session: readonly StatePatch[]; branch: readonly StatePatch[] }): void {
    if (patches.session.length > 0) this.#session = applyPatches(this.#session, patches.session as Patch[]);
    if (patches.branch.length > 0) this.#branch = applyPatches(this.#branch, patches.branch as Patch[]);
    this.patches.session.push(...patches.session);
    this.patches.branch.push(...patches.branch);
  }

  /** Forgets recorded patches (after the state they describe has been saved). */
  clearPatches(): void {
    this.patches.session.length = 0;
    this.patches.branch.length = 0;
  }
}
