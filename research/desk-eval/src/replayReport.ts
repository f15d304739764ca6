import type { Ontology } from '@baton/example-support-desk/data/ontology.js';
import { SPECIALISTS, specialistForFlow } from '@baton/example-support-desk/desk/specialists.js';
import { type CostReport, formatCostReport } from './costReport.js';
import type { CrossValidationScheme } from './folds.js';
import type { ConversationOutcome, ReplayCounts } from './replayConversation.js';
import { ranInOrder } from './replayConversation.js';
import {
  type Accuracy,
  accuracy,
  computeRouting,
  formatAccuracy,
  formatRouting,
  type RoutingReport,
} from './routingReport.js';

/** Totals over all conversations: the per-conversation counts plus stored messages and episodes. */
export interface ReplayCountTotals extends Omit<ReplayCounts, 'restarts'> {
  conversations: number;
  /** Conversations stopped by a failed turn (see each outcome's `failure`). */
  failed: number;
  /** Conversations triage handed to a specialist (the rest of `handoffs` hand later turns back to the specialist on the case). */
  routed: number;
  /** Messages stored on the sessions' main branches. */
  messages: number;
  /** Episodes saved when the sessions closed. */
  episodes: number;
  /** Conversations in which triage asked at least one clarifying question before it routed. */
  askedBeforeRouting: number;
  /** Conversations a specialist closed with `end_conversation`. */
  closedByDesk: number;
}

/** How far the specialists got with the job: the case recognised, the guideline's actions run. */
export interface CaseworkReport {
  /** Conversations whose last case a specialist named is their ABCD subflow. */
  subflow: Accuracy;
  /** Conversations in which kb.json's action sequence for their subflow ran in order (see `ranInOrder`). */
  sequenceInOrder: Accuracy;
}

/**
 * How well triage's confidence matches how often it names the flow right, over the conversations
 * whose handoff reason gave a confidence: the mean confidence, the flow accuracy among them, and the
 * expected calibration error (Naeini et al., AAAI 2015; 10 equal-width bins, weighted by size).
 */
export interface CalibrationReport {
  routed: number;
  meanConfidence: number;
  accuracy: number;
  expectedCalibrationError: number;
}

/**
 * Computes {@link CalibrationReport} from `(confidence, right)` pairs.
 * @returns `undefined` when there is no pair
 * @example
 * ```ts
 * calibrationOf([{ confidence: 0.9, right: true }, { confidence: 0.6, right: false }]); // ECE (0.1 + 0.6) / 2 = 0.35
 * ```
 */
export function calibrationOf(
  pairs: ReadonlyArray<{ confidence: number; right: boolean }>,
): CalibrationReport | undefined {
  if (pairs.length === 0) return undefined;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  let error = 0;
  for (let bin = 0; bin < 10; bin += 1) {
    const members = pairs.filter((p) => Math.min(9, Math.floor(p.confidence * 10)) === bin);
    if (members.length === 0) continue;
    error +=
      (members.length / pairs.length) *
      Math.abs(mean(members.map((p) => p.confidence)) - mean(members.map((p) => (p.right ? 1 : 0))));
  }
  return {
    routed: pairs.length,
    meanConfidence: mean(pairs.map((p) => p.confidence)),
    accuracy: mean(pairs.map((p) => (p.right ? 1 : 0))),
    expectedCalibrationError: error,
  };
}

/** A replay's report. `routing` and `counts` are deterministic: a rerun, with or without restarts, gives the same. */
export interface ReplayReport {
  /** How the offline models were evaluated, in words (the report's `Evaluation:` line). */
  evaluation: string;
  /** The cross-validation partition (folds, and the seed when one was given); absent when held out or with given models. */
  crossValidation?: CrossValidationScheme;
  store: string;
  models: string;
  routing: RoutingReport;
  /** Triage's confidence against its flow accuracy (`undefined` when no handoff gave a confidence). */
  calibration: CalibrationReport | undefined;
  casework: CaseworkReport;
  counts: ReplayCountTotals;
  /** Measured, so they vary from run to run. */
  measurements: {
    restarts: number;
    storeBytes: number | undefined;
    /** Store bytes divided by stored messages. */
    bytesPerMessage: number | undefined;
    /** Mean wall time of a `send`/`respond` call minus the time spent inside models, in milliseconds. */
    orchestrationMsPerTurn: number;
    /** Mean time inside models per `send`/`respond` call, in milliseconds. */
    modelMsPerTurn: number;
    /** The whole run, in seconds. */
    wallSeconds: number;
    /** The longest time to train one set of offline models (router and specialists' classifiers), in milliseconds; `undefined` without offline models. */
    trainingMs: number | undefined;
    /** How many sets of offline models were trained (one per cross-validation fold, or one). */
    trainings: number;
    /** The conversations the offline models learned from (all of them held out: each fold learns from fewer). */
    trainingConversations: number;
  };
  /** Each conversation's outcome, in replay order. */
  conversations: ConversationOutcome[];
  /** Tokens per conversation and per agent (models' own usage, else counted: see costReport.ts). */
  cost?: CostReport;
}

/**
 * Adds up conversation outcomes into a {@link ReplayReport}.
 *
 * @param outcomes each conversation's outcome, in replay order
 * @param context what the run used and what it measured besides the outcomes (`storeBytes` in bytes, `wallMs` in milliseconds)
 * @returns the report; per-turn times are means over all `send`/`respond` calls
 */
export function summarizeReplay(
  outcomes: readonly ConversationOutcome[],
  context: {
    ontology: Ontology;
    evaluation: string;
    crossValidation?: CrossValidationScheme;
    store: string;
    models: string;
    storeBytes: number | undefined;
    wallMs: number;
    trainingMs?: readonly number[];
    trainingConversations?: number;
    messages: number;
    episodes: number;
  },
): ReplayReport {
  const sum = (pick: (o: ConversationOutcome) => number) => outcomes.reduce((total, o) => total + pick(o), 0);
  const counts: ReplayCountTotals = {
    conversations: outcomes.length,
    routed: outcomes.filter((o) => o.routedTo !== null).length,
    failed: outcomes.filter((o) => o.failure !== null).length,
    turns: sum((o) => o.turns),
    answers: sum((o) => o.answers),
    handoffs: sum((o) => o.handoffs),
    userInputRequests: sum((o) => o.userInputRequests),
    approvalRequests: sum((o) => o.approvalRequests),
    approvals: sum((o) => o.approvals),
    rejections: sum((o) => o.rejections),
    checkpoints: sum((o) => o.checkpoints),
    toolCalls: sum((o) => o.toolCalls),
    toolErrors: sum((o) => o.toolErrors),
    clarifyingQuestions: sum((o) => o.clarifyingQuestions),
    tokens: sum((o) => o.tokens),
    messages: context.messages,
    episodes: context.episodes,
    askedBeforeRouting: outcomes.filter((o) => o.clarifyingQuestions > 0).length,
    closedByDesk: outcomes.filter((o) => o.closedByDesk).length,
  };
  const casework: CaseworkReport = {
    subflow: accuracy(outcomes.filter((o) => o.predictedSubflow === o.subflow).length, outcomes.length),
    sequenceInOrder: accuracy(
      outcomes.filter((o) => ranInOrder(context.ontology.sequences[o.subflow] ?? [], o.actions)).length,
      outcomes.length,
    ),
  };
  const trainingMs = context.trainingMs ?? [];
  const turns = Math.max(1, counts.turns);
  return {
    evaluation: context.evaluation,
    ...(context.crossValidation === undefined ? {} : { crossValidation: context.crossValidation }),
    store: context.store,
    models: context.models,
    routing: computeRouting(
      outcomes,
      context.ontology.flows,
      SPECIALISTS.map((s) => s.name),
      specialistForFlow,
    ),
    calibration: calibrationOf(
      outcomes
        .filter((o) => o.routingConfidence !== null)
        .map((o) => ({ confidence: o.routingConfidence!, right: o.predictedFlow === o.flow })),
    ),
    casework,
    counts,
    measurements: {
      restarts: sum((o) => o.restarts),
      storeBytes: context.storeBytes,
      bytesPerMessage:
        context.storeBytes === undefined || counts.messages === 0 ? undefined : context.storeBytes / counts.messages,
      orchestrationMsPerTurn: (sum((o) => o.wallMs) - sum((o) => o.modelMs)) / turns,
      modelMsPerTurn: sum((o) => o.modelMs) / turns,
      wallSeconds: context.wallMs / 1000,
      trainingMs: trainingMs.length === 0 ? undefined : Math.max(...trainingMs),
      trainings: trainingMs.length,
      trainingConversations: context.trainingConversations ?? 0,
    },
    conversations: [...outcomes],
  };
}

/**
 * The deterministic part of a report (routing and counts), for comparing runs.
 * @returns `{ routing, counts }` of `report`
 */
export function deterministicPart(
  report: ReplayReport,
): Pick<ReplayReport, 'routing' | 'calibration' | 'casework' | 'counts'> {
  return { routing: report.routing, calibration: report.calibration, casework: report.casework, counts: report.counts };
}

/**
 * Formats a report for the terminal: what was evaluated how, routing figures with the confusion
 * table, counts, measurements.
 * @returns the lines of the report, joined by newlines (as `npx --yes pnpm@10.34.8 start` prints it)
 */
export function formatReplayReport(report: ReplayReport): string {
  const c = report.counts;
  const m = report.measurements;
  const n = (value: number) => value.toLocaleString('en-US');
  return [
    `Support desk replay: ${c.conversations} conversations, models ${report.models}, store ${report.store}`,
    `Evaluation: ${report.evaluation}.`,
    '',
    formatRouting(report.routing),
    '',
    `Triage's confidence when it routed: ${
      report.calibration === undefined
        ? 'n/a'
        : `mean ${report.calibration.meanConfidence.toFixed(2)}, flow right in ${(report.calibration.accuracy * 100).toFixed(1)}% of those ${n(report.calibration.routed)}; expected calibration error ${report.calibration.expectedCalibrationError.toFixed(3)}`
    }`,
    `Subflow accuracy (the case a specialist named): ${formatAccuracy(report.casework.subflow)}`,
    `Expected action sequence ran in order (kb.json, true subflow): ${formatAccuracy(report.casework.sequenceInOrder)}`,
    `Clarifying questions by triage: ${n(c.clarifyingQuestions)}, in ${n(c.askedBeforeRouting)} of ${n(c.conversations)} conversations`,
    `Closed by a specialist with end_conversation: ${n(c.closedByDesk)} of ${n(c.conversations)}`,
    '',
    ...(report.cost === undefined ? [] : [formatCostReport(report.cost), '']),
    `Turns (send/respond calls): ${n(c.turns)}`,
    `Handoffs: ${n(c.handoffs)} (${n(c.routed)} conversations routed by triage; the other handoffs return later turns to the specialist on the case)`,
    `Requests: ${n(c.userInputRequests)} for user input (${n(c.answers)} answered, the rest still pending when the customer had no more messages), ${n(c.approvalRequests)} for approval`,
    `Approvals: ${n(c.approvals)} approved, ${n(c.rejections)} rejected`,
    `Tool calls: ${n(c.toolCalls)} (${n(c.toolErrors)} answered with an error)`,
    `Checkpoints written: ${n(c.checkpoints)}`,
    `Conversations stopped by a failed turn: ${n(c.failed)}${c.failed > 0 ? ` (first: ${report.conversations.find((o) => o.failure !== null)?.id}: ${report.conversations.find((o) => o.failure !== null)?.failure})` : ''}`,
    `Messages stored: ${n(c.messages)}; episodes saved: ${n(c.episodes)}`,
    `Bytes stored per message: ${m.bytesPerMessage === undefined ? 'n/a (in-memory store)' : `${m.bytesPerMessage.toFixed(0)} (${n(m.storeBytes ?? 0)} bytes in all)`}`,
    `Mean orchestration time per turn: ${m.orchestrationMsPerTurn.toFixed(2)} ms (model time ${m.modelMsPerTurn.toFixed(2)} ms per turn, excluded)`,
    `Offline models trained in: ${m.trainingMs === undefined ? 'n/a' : `${m.trainingMs.toFixed(0)} ms (the longest of ${m.trainings} training${m.trainings === 1 ? '' : 's'}, ${n(m.trainingConversations)} conversations or fewer each)`}`,
    `Restarts (workflow rebuilt from the store): ${n(m.restarts)}`,
    `Wall time: ${m.wallSeconds.toFixed(1)} s`,
  ].join('\n');
}
