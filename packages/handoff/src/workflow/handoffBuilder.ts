import {
  type Agent,
  AgentExecutor,
  ConfigurationError,
  type ContextProvider,
  type Executor,
  InMemoryStore,
  type Logger,
  loggedStore,
  type Store,
  silentLogger,
} from '@baton/core';
import type { InspectionEvent, Observer } from 'xstate';
import { assertHistoryWindow, type HistoryWindow, historyBound } from '../config/historyWindow.js';
import type { TelemetryOptions } from '../config/telemetryOptions.js';
import { DEFAULT_AUTONOMOUS_PROMPT } from '../turn/turnRunner.js';
import type {
  AutonomousOptions,
  CheckpointFrequency,
  CheckpointKeep,
  CheckpointOptions,
  HandoffHistoryMode,
  Participant,
  ReturnPolicy,
  TerminationCondition,
} from '../config/handoffTypes.js';
import { HandoffWorkflow } from './handoffWorkflow.js';
import { assertProviderNames } from '../config/modelInputShaper.js';

/** The limits of the default store: 10,000 sessions, removing closed or 1-hour-idle ones first when full (see `InMemoryStore`). */
export const DEFAULT_STORE_LIMITS = { maxSessions: 10_000, idleTtlMs: 60 * 60_000 } as const;

type Ref = Participant | string;
const nameOf = (ref: Ref): string => (typeof ref === 'string' ? ref : ref.name);

/**
 * Configures a handoff workflow: a coordinator agent takes each turn and hands off to specialists
 * along allowed edges (docs/architecture.md). Every method returns the builder; `build()` validates and returns
 * a {@link HandoffWorkflow}.
 *
 * Defaults: the first participant coordinates; edges go from the coordinator to every specialist and
 * back; after a specialist answers, the next turn starts at the coordinator; `maxHandoffsPerTurn` 5;
 * an `InMemoryStore`; checkpoints `{ every: 'turn', keep: { last: 5 } }`; handoff calls left out of
 * the receiving agent's input.
 *
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { ScriptedModel } from '@baton/core/testing';
 * import { HandoffBuilder } from '@baton/handoff';
 * const triage = agent({ name: 'triage', description: 'Routes customers.', instructions: 'Route.', model: new ScriptedModel([{ text: 'Hi' }]) });
 * const billing = agent({ name: 'billing', description: 'Refunds and charges.', instructions: 'Help.', model: new ScriptedModel([]) });
 * const desk = new HandoffBuilder({ name: 'support-desk' })
 *   .participants(triage, billing)
 *   .coordinator(triage)
 *   .returnTo('coordinator')
 *   .checkpoints({ every: 'step', keep: { last: 5 } })
 *   .build();
 * ```
 */
export class HandoffBuilder {
  readonly #name: string;
  readonly #participants: Participant[] = [];
  #coordinator: string | undefined;
  readonly #edges = new Map<string, string[]>();
  #returnPolicy: ReturnPolicy = 'coordinator';
  readonly #returnOverrides = new Map<string, ReturnPolicy>();
  #maxHandoffsPerTurn = 5;
  #autonomous: AutonomousOptions | undefined;
  #terminateWhen: TerminationCondition | undefined;
  #store: Store | undefined;
  #checkpoints: CheckpointOptions = {};
  readonly #providers: ContextProvider[] = [];
  #handoffHistory: HandoffHistoryMode = 'omit';
  #handoffHistorySet = false;
  #historyWindow: HistoryWindow | undefined;
  #inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  #telemetry: TelemetryOptions = {};
  #logger: { logger: Logger; slowStoreMs?: number } | undefined;

  constructor(options: { name?: string } = {}) {
    this.#name = options.name ?? 'handoff';
  }

  /** Adds participants: agents (run by core's `AgentExecutor`) or any `Executor`. Names must be unique. */
  participants(...participants: Participant[]): this {
    this.#participants.push(...participants);
    return this;
  }

  /** Sets the coordinator, which takes the first turn (default: the first participant). */
  coordinator(participant: Ref): this {
    this.#coordinator = nameOf(participant);
    return this;
  }

  /** Allows `from` to hand off to each of `to`. Once called, only the declared edges exist (default: the coordinator and every specialist both ways). */
  handoffs(from: Ref, to: readonly Ref[]): this {
    const list = this.#edges.get(nameOf(from)) ?? [];
    list.push(...to.map(nameOf));
    this.#edges.set(nameOf(from), list);
    return this;
  }

  /** Where the next turn starts after an agent answers the user: `'coordinator'` (default) or `'previous'` (stays with it); `overrides` by agent name. */
  returnTo(policy: ReturnPolicy, overrides: Record<string, ReturnPolicy> = {}): this {
    this.#returnPolicy = policy;
    for (const [agent, value] of Object.entries(overrides)) this.#returnOverrides.set(agent, value);
    return this;
  }

  /** Handoffs allowed in one turn before a handoff tool answers with an error (stops ping-pong). Default 5. */
  maxHandoffsPerTurn(limit: number): this {
    this.#maxHandoffsPerTurn = limit;
    return this;
  }

  /** Autonomous mode: after an answer the next turn starts by itself, up to `maxTurns` turns per call. */
  autonomous(options: AutonomousOptions): this {
    this.#autonomous = options;
    return this;
  }

  /** Closes the session when `condition` says so after an answer (see {@link TerminationCondition}). */
  terminateWhen(condition: TerminationCondition): this {
    this.#terminateWhen = condition;
    return this;
  }

  /** The store for sessions, messages and checkpoints (default: a new `InMemoryStore`). */
  store(store: Store): this {
    this.#store = store;
    return this;
  }

  /** Checkpoint frequency (`'turn'`, `'step'`, `'manual'`) and retention (`'latest'`, `'all'`, `{ last?, maxAgeMs? }`). */
  checkpoints(options: CheckpointOptions): this {
    this.#checkpoints = { ...this.#checkpoints, ...options };
    return this;
  }

  /**
   * Adds context providers (core's `ContextProvider`): `beforeTurn` context, composed `prepareModelInput`,
   * `onSessionClose`; each hook reaches the provider's own state slice, stored with the session. `build()` throws
   * `ConfigurationError` when two providers share a name or a name cannot key state (a `.`, a leading `$`).
   */
  contextProviders(...providers: ContextProvider[]): this {
    this.#providers.push(...providers);
    return this;
  }

  /** Adds a memory (any `ContextProvider`, e.g. `EpisodicMemory`); an alias of `contextProviders`. */
  memory(provider: ContextProvider): this {
    return this.contextProviders(provider);
  }

  /** Whether receiving agents see earlier handoff tool calls and results: `'omit'` (default) or `'keep'`. Stored history always keeps them. */
  handoffHistory(mode: HandoffHistoryMode): this {
    this.#handoffHistory = mode;
    this.#handoffHistorySet = true;
    return this;
  }

  /**
   * Bounds the history each model call sees to the newest `messages` messages (instructions and
   * recalled context aside; a window never starts with a tool result whose call it left out), as
   * OpenAI Agents' `session.getItems(limit)` or LangChain's `trimMessages`. Sessions then load only
   * what the window and recovery need instead of the whole branch, so opening a long session costs
   * about the same as a short one. Stored history is never changed; `session.messages` holds the
   * part loaded (at least the window). What needs the whole branch reads it when it runs: closing
   * the session (episodes), `fork`, `rewind`, a `terminateWhen` condition, a nested workflow
   * participant. Default: no window, the model sees the whole history (trim by tokens with
   * `WorkingMemory` from `@baton/memory` instead, or as well).
   *
   * @param window `{ messages }`, an integer ≥ 1
   * @throws {ConfigurationError} when `messages` is not an integer ≥ 1
   * @example
   * ```ts
   * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).historyWindow({ messages: 100 }).build();
   * ```
   */
  historyWindow(window: HistoryWindow): this {
    assertHistoryWindow(window);
    this.#historyWindow = { messages: window.messages };
    return this;
  }

  /** Passes an observer to XState's inspection API (`createActor(machine, { inspect })`) for every session's routing actor. */
  inspect(observer: Observer<InspectionEvent> | ((event: InspectionEvent) => void)): this {
    this.#inspect = observer;
    return this;
  }

  /**
   * Traces every turn with OpenTelemetry (`@opentelemetry/api`; the application registers an SDK):
   * spans for the turn, each agent activation, model call and tool call, with the GenAI semantic
   * conventions' attributes (see the package README, "Tracing"). Without this call turns are traced
   * with the global tracer, and without a registered SDK nothing is recorded.
   *
   * @param options `{ tracer?, captureContent? }` (message contents stay off spans unless `captureContent`)
   */
  telemetry(options: TelemetryOptions): this {
    this.#telemetry = { ...this.#telemetry, ...options };
    return this;
  }

  /**
   * Logs what an operator needs through `logger` (pino's method shape: `debug/info/warn/error`):
   * recoveries of interrupted turns, failed turns, refused handoffs, and through core's `loggedStore`
   * slow store calls (over `slowStoreMs`, default 250 ms), lost concurrency races and pruning.
   * Default: silent. Message contents are never logged.
   *
   * @example
   * ```ts
   * import pino from 'pino';
   * builder.logger(pino({ level: 'info' }), { slowStoreMs: 100 });
   * ```
   */
  logger(logger: Logger, options: { slowStoreMs?: number } = {}): this {
    this.#logger = options.slowStoreMs === undefined ? { logger } : { logger, slowStoreMs: options.slowStoreMs };
    return this;
  }

  /**
   * Validates the configuration and builds the workflow.
   * @throws {ConfigurationError} naming the problem: no participants, a duplicate name, an unknown
   *   coordinator or edge endpoint, a self-handoff, a bad limit or retention
   */
  build(): HandoffWorkflow {
    const participants = new Map<string, Executor>();
    for (const participant of this.#participants) {
      const executor = toExecutor(participant);
      if (participants.has(executor.name))
        throw new ConfigurationError(
          `Two participants are named ${JSON.stringify(executor.name)}; names must be unique.`,
        );
      participants.set(executor.name, executor);
    }
    const names = [...participants.keys()];
    const known = (name: string, role: string): string => {
      if (!participants.has(name))
        throw new ConfigurationError(
          `The ${role} ${JSON.stringify(name)} is not a participant (participants: ${names.join(', ') || 'none'}). Add it with participants().`,
        );
      return name;
    };
    if (names.length === 0)
      throw new ConfigurationError(
        `Workflow ${JSON.stringify(this.#name)} has no participants; add agents with participants().`,
      );
    const coordinator = known(this.#coordinator ?? names[0]!, 'coordinator');
    const edges = new Map<string, Set<string>>(names.map((n) => [n, new Set<string>()]));
    if (this.#edges.size === 0) {
      for (const specialist of names.filter((n) => n !== coordinator)) {
        edges.get(coordinator)!.add(specialist);
        edges.get(specialist)!.add(coordinator);
      }
    } else {
      for (const [from, targets] of this.#edges) {
        for (const to of targets) {
          if (known(from, 'handoff source') === known(to, 'handoff target'))
            throw new ConfigurationError(
              `${JSON.stringify(from)} cannot hand off to itself; remove it from handoffs(${from}, …).`,
            );
          edges.get(from)!.add(to);
        }
      }
    }
    for (const agent of this.#returnOverrides.keys()) known(agent, 'returnTo override');
    if (!Number.isInteger(this.#maxHandoffsPerTurn) || this.#maxHandoffsPerTurn < 0) {
      throw new ConfigurationError(
        `maxHandoffsPerTurn must be an integer ≥ 0, not ${JSON.stringify(this.#maxHandoffsPerTurn)}.`,
      );
    }
    const autonomous = this.#autonomous;
    if (autonomous !== undefined && (!Number.isInteger(autonomous.maxTurns) || autonomous.maxTurns < 1)) {
      throw new ConfigurationError(
        `autonomous({ maxTurns }) must be an integer ≥ 1, not ${JSON.stringify(autonomous.maxTurns)}.`,
      );
    }
    const every: CheckpointFrequency = this.#checkpoints.every ?? 'turn';
    if (!['turn', 'step', 'manual'].includes(every))
      throw new ConfigurationError(
        `checkpoints({ every }) must be 'turn', 'step' or 'manual', not ${JSON.stringify(every)}.`,
      );
    const keep: CheckpointKeep = this.#checkpoints.keep ?? { last: 5 };
    assertKeep(keep);
    assertProviderNames(this.#providers);
    historyBound(this.#historyWindow?.messages, this.#providers); // a bad maxHistoryMessages fails here, not at open
    const store = this.#store ?? new InMemoryStore(DEFAULT_STORE_LIMITS);
    const logging = this.#logger;
    return new HandoffWorkflow({
      name: this.#name,
      participants,
      coordinator,
      edges,
      returnPolicy: this.#returnPolicy,
      returnOverrides: this.#returnOverrides,
      maxHandoffsPerTurn: this.#maxHandoffsPerTurn,
      autonomous: autonomous && {
        maxTurns: autonomous.maxTurns,
        prompt: autonomous.prompt ?? DEFAULT_AUTONOMOUS_PROMPT,
      },
      terminateWhen: this.#terminateWhen,
      store:
        logging === undefined
          ? store
          : loggedStore(
              store,
              logging.slowStoreMs === undefined
                ? { logger: logging.logger }
                : { logger: logging.logger, slowMs: logging.slowStoreMs },
            ),
      checkpointEvery: every,
      checkpointKeep: keep,
      contextProviders: [...this.#providers],
      handoffHistory: this.#handoffHistory,
      historyWindow: this.#historyWindow,
      inspect: this.#inspect,
      sessionOptions: [
        this.#store !== undefined && 'store()',
        Object.keys(this.#checkpoints).length > 0 && 'checkpoints()',
        this.#providers.length > 0 && 'memory()/contextProviders()',
        autonomous !== undefined && 'autonomous()',
        this.#terminateWhen !== undefined && 'terminateWhen()',
        this.#handoffHistorySet && 'handoffHistory()',
        this.#historyWindow !== undefined && 'historyWindow()',
      ].filter((option): option is string => option !== false),
      telemetry: { ...this.#telemetry },
      logger: logging?.logger ?? silentLogger,
    });
  }
}

function toExecutor(participant: Participant): Executor {
  if (typeof (participant as Executor).execute === 'function') return participant as Executor;
  if ('model' in participant && 'instructions' in participant) return new AgentExecutor(participant as Agent);
  throw new ConfigurationError(
    `Participant ${JSON.stringify((participant as { name?: unknown }).name)} is neither an agent (agent({…})) nor an Executor (an object with execute()).`,
  );
}

function assertKeep(keep: CheckpointKeep): void {
  if (keep === 'latest' || keep === 'all') return;
  const positive = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0);
  if (
    typeof keep !== 'object' ||
    keep === null ||
    !positive(keep.last) ||
    !positive(keep.maxAgeMs) ||
    (keep.last !== undefined && !Number.isInteger(keep.last))
  ) {
    throw new ConfigurationError(
      `checkpoints({ keep }) must be 'latest', 'all' or { last?: integer ≥ 1, maxAgeMs?: > 0 }, not ${JSON.stringify(keep)}.`,
    );
  }
}
