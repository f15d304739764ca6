import { type BatonEvent, MAIN_BRANCH, type Store } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import type { AbcdConversation } from '../data/abcdData.js';
import { FOLDS, foldOf } from '../data/folds.js';
import type { Ontology } from '../data/ontology.js';
import { createDeskAgents, type DeskAgents, type DeskModels } from '../desk/deskAgents.js';
import { createOfflineModels, mapDeskModels } from '../desk/deskModels.js';
import type { DeskStore } from '../desk/deskStore.js';
import { buildDeskWorkflow } from '../desk/deskWorkflow.js';
import { CostMeter, CountedModel } from '../models/costReport.js';
import { ModelClock, TimedModel } from '../models/timedModel.js';
import { World, WorldDirectory } from '../tools/world.js';
import { type ConversationOutcome, replayConversation, sessionIdFor } from './replayConversation.js';
import { type ReplayCountTotals, type ReplayReport, summarizeReplay } from './replayReport.js';

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
  ontology: Ontology;
  deskStore: DeskStore;
  /** `undefined`: the offline models, learned per cross-validation fold; otherwise these models for every conversation. */
  models?: DeskModels;
  /** Rebuild the workflow (and reopen the store) every N customer messages; 0 never. */
  restartEvery?: number;
  /** Reject refunds instead of approving them. */
  rejectRefunds?: boolean;
  /** Called with every event of every session, in order. */
  onEvent?: (event: BatonEvent) => void;
  /** Called after each conversation. */
  onConversation?: (outcome: ConversationOutcome, done: number, total: number) => void;
}

/**
 * Replays conversations through the support desk and reports on them. Offline, each conversation
 * is handled by models learned from the other folds only (5-fold cross-validation by a stable hash
 * of the conversation id), so routing accuracy is measured on conversations the router did not learn
 * from. Sessions are stored in `deskStore` (cleared first, so runs are repeatable) and closed at the
 * end; episodic memory saves an episode for each.
 *
 * @param options `{ conversations, ontology, deskStore, training?, models?, restartEvery?, rejectRefunds?, onEvent?, onConversation? }`
 * @returns the report: routing figures, counts, measurements
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
  const started = performance.now();
  await deskStore.reset(conversations.map((c) => sessionIdFor(c.id)));
  const clock = new ModelClock();
  const cost = new CostMeter();
  const worlds = new WorldDirectory();
  const heldOut = options.evaluation === 'held-out';
  const training = options.training ?? conversations;
  const agentsByFold = new Map<number, DeskAgents>();
  const trainingMs: number[] = [];
  const agentsFor = (conversation: AbcdConversation): DeskAgents => {
    const fold = options.models === undefined && !heldOut ? foldOf(conversation.id) : -1;
    let agents = agentsByFold.get(fold);
    if (agents === undefined) {
      const trainingStarted = performance.now();
      const models = options.models ?? createOfflineModels(training.filter((c) => foldOf(c.id) !== fold), ontology);
      if (options.models === undefined) trainingMs.push(performance.now() - trainingStarted);
      agents = createDeskAgents(ontology, mapDeskModels(models, (model) => new TimedModel(new CountedModel(model), clock)), worlds);
      agentsByFold.set(fold, agents);
    }
    return agents;
  };
  const memory = new EpisodicMemory();
  let store: Store = await deskStore.open();
  const outcomes: ConversationOutcome[] = [];
  let messages = 0;
  let episodes = 0;
  for (const conversation of conversations) {
    const sessionId = sessionIdFor(conversation.id);
    worlds.set(sessionId, World.fromConversation(conversation));
    const agents = agentsFor(conversation);
    let workflow: HandoffWorkflow | undefined;
    const outcome = await replayConversation(conversation, {
      clock,
      flows: ontology.flows,
      subflows: Object.values(ontology.subflows).flat(),
      restartEvery: options.restartEvery ?? 0,
      onEvent: (event) => {
        cost.observe(event);
        options.onEvent?.(event);
      },
      decide: () => (options.rejectRefunds ? { approved: false, reason: 'refunds are not approved in this run' } : { approved: true }),
      open: async ({ id, userId }) => {
        if (workflow !== undefined && deskStore.reopens) {
          await store.close();
          store = await deskStore.open();
        }
        workflow = buildDeskWorkflow({ agents, store, memory });
        return workflow.session({ id, userId });
      },
    });
    messages += (await store.readMessages(sessionId, MAIN_BRANCH)).length;
    if ((await store.getEpisode(sessionId)) !== undefined) episodes += 1;
    outcomes.push(outcome);
    options.onConversation?.(outcome, outcomes.length, conversations.length);
  }
  const storeBytes = await deskStore.bytes();
  await store.close();
  const extra: Pick<ReplayCountTotals, 'messages' | 'episodes'> = { messages, episodes };
  const report = summarizeReplay(outcomes, {
    ontology,
    evaluation: describeEvaluation(options, training),
    store: `${deskStore.kind} (${deskStore.location})`,
    models: options.models === undefined ? 'offline (abcd-router-nb, abcd-policy-kb)' : options.models.triage.model,
    storeBytes,
    wallMs: performance.now() - started,
    trainingMs,
    trainingConversations: training.length,
    ...extra,
  });
  report.cost = cost.report();
  return report;
}

function describeEvaluation(options: RunReplayOptions, training: readonly AbcdConversation[]): string {
  if (options.models !== undefined) return 'no training: the given models handle every conversation';
  if (options.evaluation !== 'held-out') {
    return `${FOLDS}-fold cross-validation by sha256 of the conversation id: each conversation routed by models learned from the other ${FOLDS - 1} folds`;
  }
  const learned = new Set(training.map((c) => c.id));
  const overlap = options.conversations.filter((c) => learned.has(c.id)).length;
  return `held out: models learned from ${training.length.toLocaleString('en-US')} training conversations; ${overlap === 0 ? 'none of the replayed conversations is among them' : `${overlap} of the replayed conversations are among them (same id)`}`;
}
