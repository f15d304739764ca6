import { createActor, type InspectionEvent, type Observer } from 'xstate';
import {
  initialRoutingContext,
  persistDirectly,
  ROUTING_TRANSITIONS,
  type RoutingConfig,
  type RoutingContext,
  type RoutingEvent,
  type RoutingMachine,
  type RoutingPersister,
  type RoutingSnapshot,
  type RoutingStateValue,
  type RoutingTransition,
  routingActions,
  routingGuards,
} from './routingMachine.js';

/** Where the routing machine stands: what the session runtime reads of a snapshot (an XState snapshot of the routing machine is one). */
export interface RoutingPosition {
  readonly value: RoutingSnapshot['value'];
  readonly context: RoutingContext;
  readonly status: RoutingSnapshot['status'];
  /** Whether `event` would be taken now (XState's `snapshot.can`). */
  can(event: RoutingEvent): boolean;
}

/** What moves the routing machine: sends events and reads where it stands (an XState actor is one). */
export interface RoutingSender {
  send(event: RoutingEvent): void;
  getSnapshot(): RoutingPosition;
}

/** The session runtime's routing machine: a {@link RoutingSender} that also persists its snapshot and stops. */
export interface RoutingDriver extends RoutingSender {
  /** The persisted snapshot, as XState's `getPersistedSnapshot` gives it (what a checkpoint stores as `machine`). */
  persist(): unknown;
  /** Stops it (an XState actor stops; the direct stepper has nothing to stop). */
  stop(): void;
}

/** What {@link createRoutingDriver} needs: the machine, its configuration, and how to persist its snapshots. */
export interface RoutingDriverOptions {
  machine: RoutingMachine;
  config: RoutingConfig;
  persist: RoutingPersister;
  /** Whether the direct stepper's persisted form is XState's for this XState version (see `persistsDirectly`). */
  direct: boolean;
  /** An XState inspector: the routing machine then runs as an XState actor, so inspection sees every event. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/**
 * The routing machine for one session runtime, restored at `persisted` (a snapshot validated by the
 * caller) or at its initial state. Without an inspector it is a direct stepper over
 * `ROUTING_TRANSITIONS`, the table the XState machine is built from: the same transitions, guards
 * and context updates, about ten times cheaper per event than an XState actor (no macrostep, no
 * snapshot cloning; a handoff turn sends three events). With an inspector, or when the direct
 * persisted form does not match this XState version's, it is an XState actor
 * (`createActor(machine, { snapshot })`). `routingDriver.test.ts` runs both side by side on random
 * graphs and event sequences and compares every snapshot and persisted form.
 *
 * @throws what XState throws when it cannot restore `persisted` (XState actor only; an error status is reported by `failed`)
 */
export function createRoutingDriver(
  options: RoutingDriverOptions,
  persisted?: { value: RoutingStateValue; context: RoutingContext; status: 'active' | 'done' },
): RoutingDriver & { failed?: unknown } {
  if (options.direct && options.inspect === undefined) {
    const stepper = new RoutingStepper(options.config);
    if (persisted === undefined)
      return new DirectRoutingDriver(new DirectRoutingSnapshot('idle', initialRoutingContext(options.config), stepper));
    // As XState restores it: the state, context and status as persisted (a done snapshot takes no more events).
    return new DirectRoutingDriver(
      new DirectRoutingSnapshot(persisted.value, persisted.context, stepper, persisted.status),
    );
  }
  const actorOptions = options.inspect === undefined ? {} : { inspect: options.inspect };
  const actor =
    persisted === undefined
      ? createActor(options.machine, actorOptions)
      : createActor(options.machine, { ...actorOptions, snapshot: persisted as never });
  let failed: unknown;
  actor.subscribe({ error: (error) => (failed = error) });
  actor.start();
  if (failed === undefined && actor.getSnapshot().status === 'error')
    failed = actor.getSnapshot().error ?? new Error('The routing actor is in an error state.');
  const persist = options.persist;
  const driver: RoutingDriver & { failed?: unknown } = {
    send: (event) => actor.send(event),
    getSnapshot: () => actor.getSnapshot(),
    persist: () => persist(actor.getSnapshot()),
    stop: () => actor.stop(),
  };
  if (failed !== undefined) driver.failed = failed;
  return driver;
}

/** The guards and context updates of one configuration, applied to {@link ROUTING_TRANSITIONS}. */
class RoutingStepper {
  readonly guards: ReturnType<typeof routingGuards>;
  readonly actions: ReturnType<typeof routingActions>;

  constructor(config: RoutingConfig) {
    this.guards = routingGuards(config);
    this.actions = routingActions(config);
  }

  /** The transition `event` takes from `value` with `context`, or `undefined` when none is enabled (the event is ignored). */
  enabled(value: RoutingStateValue, context: RoutingContext, event: RoutingEvent): RoutingTransition | undefined {
    const transition = ROUTING_TRANSITIONS[value][event.type];
    if (transition === undefined) return undefined;
    for (const guard of transition.guards ?? []) if (!this.guards[guard](context, event)) return undefined;
    return transition;
  }
}

/** A snapshot of the direct stepper: XState's `value`, `context`, `status` and `can`, immutable. */
class DirectRoutingSnapshot implements RoutingPosition {
  readonly status: 'active' | 'done';
  /** Always `undefined`: the routing machine has no output (persisted as XState persists it). */
  readonly output = undefined;
  /** Always `undefined`: the direct stepper never fails. */
  readonly error = undefined;

  /** @param status as restored; by default `done` in the final state `closed`, else `active` (as XState sets it on a transition) */
  constructor(
    readonly value: RoutingStateValue,
    readonly context: RoutingContext,
    readonly stepper: RoutingStepper,
    status?: 'active' | 'done',
  ) {
    this.status = status ?? (value === 'closed' ? 'done' : 'active');
  }

  /** Whether `event` would change anything (XState's `snapshot.can`). */
  can(event: RoutingEvent): boolean {
    return this.stepper.enabled(this.value, this.context, event) !== undefined;
  }
}

/** The direct stepper: one immutable snapshot, replaced on every enabled event. */
class DirectRoutingDriver implements RoutingDriver {
  #snapshot: DirectRoutingSnapshot;

  constructor(snapshot: DirectRoutingSnapshot) {
    this.#snapshot = snapshot;
  }

  send(event: RoutingEvent): void {
    const current = this.#snapshot;
    if (current.status !== 'active') return;
    const transition = current.stepper.enabled(current.value, current.context, event);
    if (transition === undefined) return;
    const context =
      transition.action === undefined
        ? current.context
        : { ...current.context, ...current.stepper.actions[transition.action](current.context, event) };
    this.#snapshot = new DirectRoutingSnapshot(transition.target ?? current.value, context, current.stepper);
  }

  getSnapshot(): DirectRoutingSnapshot {
    return this.#snapshot;
  }

  persist(): unknown {
    return persistDirectly(this.#snapshot);
  }

  stop(): void {}
}
