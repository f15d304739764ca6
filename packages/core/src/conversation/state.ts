import { applyPatches, enablePatches, type Draft, type Patch, produceWithPatches } from 'immer';
import type { StatePatch } from './checkpoint.js';
import type { Message } from './message.js';
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
  /** How many of `patches.branch` {@link takeNewBranchPatches} has handed out. */
  #takenBranch = 0;

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
    // Saved patches were recorded where they were made (see takeNewBranchPatches): not new.
    this.#takenBranch = this.patches.branch.length;
  }

  /**
   * The branch patches recorded since the last call (or since the last `clearPatches()`/`apply()`),
   * oldest first. The handoff runtime stores them on the message committed next, so a branch's
   * messages are a log of its state: the state as of seq k is every such patch through k applied
   * to `{}` (see {@link branchStateAt}).
   */
  takeNewBranchPatches(): StatePatch[] {
    if (this.#takenBranch === this.patches.branch.length) return [];
    const taken = this.patches.branch.slice(this.#takenBranch);
    this.#takenBranch = this.patches.branch.length;
    return taken;
  }

  /** Forgets recorded patches (after the state they describe has been saved). */
  clearPatches(): void {
    this.patches.session.length = 0;
    this.patches.branch.length = 0;
    this.#takenBranch = 0;
  }
}

/** The key of a message's metadata under which the handoff runtime logs the branch state patches made before it was committed. */
export const STATE_PATCHES_KEY = 'statePatches';

/**
 * A branch's state as of seq `throughSeq`: the branch state patches logged on its messages
 * (`metadata.statePatches`, oldest first, fork parents included) applied to `{}`.
 *
 * @param messages the branch's history as `readMessages` returns it (fork parents first), oldest first
 * @returns the state, or `{}` when no message through `throughSeq` logged a change
 * @example
 * ```ts
 * const state = branchStateAt(await store.readMessages(sessionId, 'main'), 12);
 * ```
 */
export function branchStateAt(messages: readonly Message[], throughSeq = Number.POSITIVE_INFINITY): State {
  let state: State = {};
  for (const message of messages) {
    if (message.seq > throughSeq) break;
    const patches = message.metadata?.[STATE_PATCHES_KEY];
    if (Array.isArray(patches) && patches.length > 0) state = applyPatches(state, patches as Patch[]);
  }
  return state;
}
