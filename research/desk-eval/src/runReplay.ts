import { availableParallelism } from 'node:os';
import { type BatonEvent, InvalidInputError, MAIN_BRANCH, type Store } from '@baton/core';
import type { Ontology } from '@baton/example-support-desk/data/ontology.js';
import { createDeskAgents, type DeskAgents, type DeskModels } from '@baton/example-support-desk/desk/deskAgents.js';
import { createOfflineModels, mapDeskModels } from '@baton/example-support-desk/desk/deskModels.js';
import type { DeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { buildDeskWorkflow } from '@baton/example-support-desk/desk/deskWorkflow.js';
import { World, WorldDirectory } from '@baton/example-support-desk/tools/world.js';
import type { HandoffWorkflow } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import type { AbcdConversation } from '@baton/support-desk-models';
import { CostMeter, type CostReport, CountedModel } from './costReport.js';
import { type CrossValidationScheme, checkCrossValidation, FOLDS, foldOf } from './folds.js';
import { type ConversationOutcome, replayConversation, sessionIdFor } from './replayConversation.js';
import { type ReplayCountTotals, type ReplayReport, summarizeReplay } from './replayReport.js';
import { replayInWorkers } from './replayWorkers.js';
import { ModelClock, TimedModel } from './timedModel.js';

/** Options of {@link runReplay}. */
export interface RunReplayOptions {
  conversations: readonly AbcdConversation[];
  /** What the offline models learn from (default `conversations`); with cross-validation a conversation's own fold is left out. */
  training?: readonly AbcdConversation[];
  /**
   * `'cross-validation'` (default): each conversation is handled by offline models learned from the
   * other folds of `training`; `'held-out'`: by offline models learned from all of `training` (a
   * separate file, as `start --train FILE --eval FILE` gives).
   */
  evaluation?: 'cross-validation' | 'held-out';
  /**
   * The cross-validation partition (with `evaluation: 'cross-validation'`): `folds` (default {@link FOLDS}; a whole
   * number 2–50, when given at most the training conversations) and `seed` (1–64 printable ASCII characters; default none: the
   * partition every figure of the README was measured on). A seed draws another random partition by
   * `sha256("baton-fold:" + seed + ":" + id)`, so repeating a replay with seeds `1`, `2`, … shows how much its
   * figures depend on the partition (`scripts/repeatedCv.ts`). Refused with `'held-out'` or given `models`.
   */
  crossValidation?: { folds?: number; seed?: string };
  ontology: Ontology;
  deskStore: DeskStore;
  /** `undefined`: the offline models, learned per cross-validation fold; otherwise these models for every conversation. */
  models?: DeskModels;
  /** Rebuild the workflow (and reopen the store) every N customer messages; 0 never. */
  restartEvery?: number;
  /** Reject refunds instead of approving them. */
  rejectRefunds?: boolean;
  /**
   * How many conversations are replayed at a time (default {@link DEFAULT_REPLAY_CONCURRENCY}; at least 1). Each is
   * its own session and its turns stay in order; the report is the same for any value (only timings differ).
   */
  concurrency?: number;
  /**
   * Worker threads replaying the conversations (default 1: all in this thread). With more, the
   * conversations are sorted by fold and cut into `workers` runs of consecutive ones; each worker
   * trains the folds it needs, replays its run on `concurrency` lanes into the same store, and the
   * outcomes are merged in input order (the report is the same for any value, but for timings and
   * `measurements.trainings`). Workers load the ontology with `loadOntology()`. Runs with given
   * `models` or an in-memory store stay in this thread (neither crosses threads).
   */
  workers?: number;
  /** Called with every event of every session; a session's events in order (with `concurrency` > 1, sessions interleave). */
  onEvent?: (event: BatonEvent) => void;
  /** Called after each conversation, as it finishes (with `concurrency` > 1, not necessarily in the input order); `done` counts the finished. */
  onConversation?: (outcome: ConversationOutcome, done: number, total: number) => void;
}

/**
 * Conversations replayed at a time by default: enough to overlap one conversation's store writes
 * (a FileStore waits on `fdatasync`) with another's models on two cores.
 */
export const DEFAULT_REPLAY_CONCURRENCY = 4;

/**
 * Worker threads of the `replay` command by default: two (the machine this example is measured on has
 * two cores; each worker trains a few folds, so more workers than cores add trainings and gain nothing),
 * or one where Node reports a single core. `runReplay` itself defaults to 1.
 */
export const DEFAULT_REPLAY_WORKERS = Math.min(2, availableParallelism());

/**
 * Replays conversations through the support desk and reports on them. Offline, each conversation
 * is handled by models learned from the other folds only (5-fold cross-validation by a stable hash
 * of the conversation id, or the folds and seed of `crossValidation`), so routing accuracy is measured on conversations the router did not learn
 * from. Sessions are stored in `deskStore` (cleared first, so runs are repeatable) and closed at the
 * end; episodic memory saves an episode for each. `concurrency` conversations are replayed at a time,
 * each on its own session (its turns in order); outcomes and token counts are reported in the input
 * order, so the report is the same for any concurrency (but for timings).
 *
 * @param options `{ conversations, ontology, deskStore, training?, evaluation?, crossValidation?, models?, restartEvery?, rejectRefunds?, concurrency?, workers?, onEvent?, onConversation? }`
 * @returns the report: routing figures, counts, measurements
 * @throws {InvalidInputError} when `concurrency` or `workers` is not a whole number ≥ 1; when `crossValidation` has folds that are
 *   not a whole number 2–50 or (given) more than the training conversations, or a seed that is not 1–64 printable ASCII characters,
 *   or is given with `evaluation: 'held-out'` or with `models` (all before the store is touched)
 * @throws {ReplayWorkerError} when a worker thread stops without a report (it crashed, or could not load)
 * @throws {ConfigurationError} when the store folder holds files a FileStore does not write (it is not cleared);
 *   the store's errors. A failed turn stops only its conversation (see `ConversationOutcome.failure`)
 * @example
 * ```ts
 * const report = await runReplay({ conversations, ontology: loadOntology(), deskStore: chooseDeskStore() });
 * console.log(formatReplayReport(report));
 * ```
 */
export async function runReplay(options: RunReplayOptions): Promise<ReplayReport> {
  const { conversations, ontology, deskStore } = options;
  const concurrency = options.concurrency ?? DEFAULT_REPLAY_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidInputError(`concurrency must be a whole number ≥ 1, not ${concurrency}.`);
  const requestedWorkers = options.workers ?? 1;
  if (!Number.isInteger(requestedWorkers) || requestedWorkers < 1)
    throw new InvalidInputError(`workers must be a whole number ≥ 1, not ${requestedWorkers}.`);
  const crossValidation = resolveCrossValidation(options);
  // Models given by the caller do not cross threads, nor does an in-memory store: those runs stay in this thread.
  const workers =
    options.models === undefined && deskStore.reopens
      ? Math.min(requestedWorkers, Math.max(1, conversations.length))
      : 1;
  const training = options.training ?? conversations;
  // Folds the caller chose must each hold a conversation; the default 5 still take a smaller file (some folds then test nothing).
  if (crossValidation !== undefined)
    checkCrossValidation(
      crossValidation.folds,
      crossValidation.seed,
      options.crossValidation?.folds === undefined ? undefined : training.length,
    );
  const started = performance.now();
  await deskStore.reset(conversations.map((c) => sessionIdFor(c.id)));
  let part: ReplayPart;
  let storeBytes: number | undefined;
  if (workers === 1) {
    part = await replayPart(
      { ...options, concurrency, training, scheme: crossValidation },
      conversations.length,
      async () => {
        storeBytes = await deskStore.bytes();
      },
    );
  } else {
    part = await replayInWorkers({ ...options, concurrency, training, scheme: crossValidation }, workers);
    storeBytes = await deskStore.bytes();
    // A store that does not reopen (MongoDB) opened its client here to reset and measure: close it.
    if (!deskStore.reopens) await (await deskStore.open()).close();
  }
  const cost = new CostMeter();
  for (const report of part.costs) cost.add(report);
  const extra: Pick<ReplayCountTotals, 'messages' | 'episodes'> = { messages: part.messages, episodes: part.episodes };
  const report = summarizeReplay(part.outcomes, {
    ontology,
    evaluation: describeEvaluation(options, training, crossValidation),
    ...(crossValidation === undefined ? {} : { crossValidation }),
    store: `${deskStore.kind} (${deskStore.location})`,
    models: options.models === undefined ? 'offline (abcd-router-nb, abcd-policy-kb)' : options.models.triage.model,
    storeBytes,
    wallMs: performance.now() - started,
    trainingMs: part.trainingMs,
    trainingConversations: training.length,
    ...extra,
  });
  report.cost = cost.report();
  return report;
}

/**
 * What replaying some conversations gives, before it is summed up: outcomes and token reports in
 * input order, stored messages and episodes, the time of each training. Plain data (a worker posts it).
 */
export interface ReplayPart {
  outcomes: ConversationOutcome[];
  costs: CostReport[];
  messages: number;
  episodes: number;
  trainingMs: number[];
}

/** What {@link replayPart} needs: {@link RunReplayOptions} with the defaults filled in, plus a stop signal. */
export interface ReplayPartOptions extends RunReplayOptions {
  training: readonly AbcdConversation[];
  concurrency: number;
  /** The checked cross-validation partition; `undefined` when nothing is trained per fold (held out, or given models). */
  scheme: CrossValidationScheme | undefined;
  /** Checked before each conversation: once it returns true, no lane takes another conversation. */
  stopRequested?: () => boolean;
  /** Called with each conversation's outcome and its index in `conversations`. */
  onOutcome?: (outcome: ConversationOutcome, index: number) => void;
}

/**
 * Replays `conversations` into the desk store (not reset here) on `concurrency` lanes in this thread,
 * training each fold's offline models on first use. `runReplay` calls it for `workers: 1`; each
 * replay worker calls it for its share.
 *
 * @param total the conversations of the whole run (for `onConversation`'s `total`)
 * @param beforeClose called once every lane finished, before the store objects are closed (to measure the store)
 * @returns the part's outcomes and token reports in `conversations` order
 * @throws the store's errors (the other lanes finish their conversation and take no other); a failed turn stops only its conversation
 */
export async function replayPart(
  options: ReplayPartOptions,
  total: number,
  beforeClose?: () => Promise<void>,
): Promise<ReplayPart> {
  const { conversations, ontology, deskStore, training, concurrency, scheme } = options;
  const worlds = new WorldDirectory();
  // Models are learned once per fold (on first use) and shared by the lanes; each lane wraps them with its own clock.
  const modelsByFold = new Map<number, DeskModels>();
  const trainingMs: number[] = [];
  const modelsFor = (fold: number): DeskModels => {
    let models = modelsByFold.get(fold);
    if (models === undefined) {
      const trainingStarted = performance.now();
      models =
        options.models ??
        createOfflineModels(
          scheme === undefined ? training : training.filter((c) => foldOf(c.id, scheme.folds, scheme.seed) !== fold),
          ontology,
        );
      if (options.models === undefined) trainingMs.push(performance.now() - trainingStarted);
      modelsByFold.set(fold, models);
    }
    return models;
  };
  const memory = new EpisodicMemory();
  // Stores that reopen (files, MongoDB) get one object per lane, so that a lane's restart closes only its own;
  // an in-memory store is one object for all.
  const shared = deskStore.reopens ? undefined : await deskStore.open();
  const lanes: Lane[] = [];
  for (let i = 0; i < Math.min(concurrency, Math.max(1, conversations.length)); i += 1) {
    lanes.push({ clock: new ModelClock(), agentsByFold: new Map(), store: shared ?? (await deskStore.open()) });
  }
  const outcomes: ConversationOutcome[] = new Array(conversations.length);
  // Each conversation's tokens on a meter of its own, added up in conversation order: the same report for any concurrency.
  const meters: CostMeter[] = new Array(conversations.length);
  let messages = 0;
  let episodes = 0;
  let next = 0;
  let done = 0;
  let stopped = false;

  const replayOne = async (lane: Lane, index: number): Promise<void> => {
    const conversation = conversations[index]!;
    const sessionId = sessionIdFor(conversation.id);
    worlds.set(sessionId, World.fromConversation(conversation));
    const fold = scheme === undefined ? -1 : foldOf(conversation.id, scheme.folds, scheme.seed);
    let agents = lane.agentsByFold.get(fold);
    if (agents === undefined) {
      agents = createDeskAgents(
        ontology,
        mapDeskModels(modelsFor(fold), (model) => new TimedModel(new CountedModel(model), lane.clock)),
        worlds,
      );
      lane.agentsByFold.set(fold, agents);
    }
    const meter = new CostMeter();
    meters[index] = meter;
    let workflow: HandoffWorkflow | undefined;
    const outcome = await replayConversation(conversation, {
      clock: lane.clock,
      flows: ontology.flows,
      subflows: Object.values(ontology.subflows).flat(),
      restartEvery: options.restartEvery ?? 0,
      onEvent: (event) => {
        meter.observe(event);
        options.onEvent?.(event);
      },
      decide: () =>
        options.rejectRefunds
          ? { approved: false, reason: 'refunds are not approved in this run' }
          : { approved: true },
      open: async ({ id, userId }) => {
        if (workflow !== undefined && deskStore.reopens) {
          await lane.store.close();
          lane.store = await deskStore.open();
        }
        workflow = buildDeskWorkflow({ agents, store: lane.store, memory });
        return workflow.session({ id, userId });
      },
    });
    // Read first, then add: `messages += await …` would read `messages` before the await and lose another lane's addition.
    const stored = (await lane.store.readMessages(sessionId, MAIN_BRANCH)).length;
    messages += stored;
    if ((await lane.store.getEpisode(sessionId)) !== undefined) episodes += 1;
    outcomes[index] = outcome;
    done += 1;
    options.onOutcome?.(outcome, index);
    options.onConversation?.(outcome, done, total);
  };

  const runLane = async (lane: Lane): Promise<void> => {
    while (!stopped && !(options.stopRequested?.() ?? false) && next < conversations.length) {
      const index = next;
      next += 1;
      try {
        await replayOne(lane, index);
      } catch (error) {
        // A store error stops the replay: the other lanes finish their conversation and take no other.
        stopped = true;
        throw error;
      }
    }
  };

  try {
    const settled = await Promise.allSettled(lanes.map(runLane));
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await beforeClose?.();
  } finally {
    for (const lane of shared === undefined ? lanes : lanes.slice(0, 1)) await lane.store.close();
  }
  return { outcomes, costs: meters.map((meter) => meter.report()), messages, episodes, trainingMs };
}

/** One of the replay's lanes: it replays one conversation at a time, on its own store object, timing its models on its own clock. */
interface Lane {
  clock: ModelClock;
  agentsByFold: Map<number, DeskAgents>;
  store: Store;
}

/**
 * The cross-validation partition of a run: `undefined` when nothing is trained per fold (given models, or held out).
 * @throws {InvalidInputError} when `crossValidation` is given with `evaluation: 'held-out'` or with `models`
 */
function resolveCrossValidation(options: RunReplayOptions): CrossValidationScheme | undefined {
  const given = options.crossValidation;
  if (options.models !== undefined || options.evaluation === 'held-out') {
    if (given !== undefined) {
      throw new InvalidInputError(
        options.models !== undefined
          ? 'crossValidation was given with models: the given models handle every conversation, nothing is trained per fold.'
          : "crossValidation was given with evaluation 'held-out': held-out models learn from all of training, there are no folds.",
      );
    }
    return undefined;
  }
  const folds = given?.folds ?? FOLDS;
  return given?.seed === undefined ? { folds } : { folds, seed: given.seed };
}

function describeEvaluation(
  options: RunReplayOptions,
  training: readonly AbcdConversation[],
  scheme: CrossValidationScheme | undefined,
): string {
  if (options.models !== undefined) return 'no training: the given models handle every conversation';
  if (scheme !== undefined) {
    const seed = scheme.seed === undefined ? '' : ` (seed ${scheme.seed})`;
    return `${scheme.folds}-fold cross-validation${seed} by sha256 of the conversation id: each conversation routed by models learned from the other ${scheme.folds - 1} fold${scheme.folds === 2 ? '' : 's'}`;
  }
  const learned = new Set(training.map((c) => c.id));
  const overlap = options.conversations.filter((c) => learned.has(c.id)).length;
  return `held out: models learned from ${training.length.toLocaleString('en-US')} training conversations; ${overlap === 0 ? 'none of the replayed conversations is among them' : `${overlap} of the replayed conversations are among them (same id)`}`;
}
