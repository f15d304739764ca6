import { type CostReport, formatCostReport } from './costReport.js';
import type { Ontology } from './ontology.js';
import type { ConversationOutcome, ReplayCounts } from './replayConversation.js';
import { computeRouting, formatRouting, type RoutingReport } from './routingReport.js';
import { SPECIALISTS, specialistForFlow } from './specialists.js';

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
}

/** A replay's report. `routing` and `counts` are deterministic: a rerun, with or without restarts, gives the same. */
export interface ReplayReport {
  evaluation: string;
  store: string;
  models: string;
  routing: RoutingReport;
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
  context: { ontology: Ontology; evaluation: string; store: string; models: string; storeBytes: number | undefined; wallMs: number; messages: number; episodes: number },
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
    messages: context.messages,
    episodes: context.episodes,
  };
  const turns = Math.max(1, counts.turns);
  return {
    evaluation: context.evaluation,
    store: context.store,
    models: context.models,
    routing: computeRouting(outcomes, context.ontology.flows, SPECIALISTS.map((s) => s.name), specialistForFlow),
    counts,
    measurements: {
      restarts: sum((o) => o.restarts),
      storeBytes: context.storeBytes,
      bytesPerMessage: context.storeBytes === undefined || counts.messages === 0 ? undefined : context.storeBytes / counts.messages,
      orchestrationMsPerTurn: (sum((o) => o.wallMs) - sum((o) => o.modelMs)) / turns,
      modelMsPerTurn: sum((o) => o.modelMs) / turns,
      wallSeconds: context.wallMs / 1000,
    },
    conversations: [...outcomes],
  };
}

/**
 * The deterministic part of a report (routing and counts), for comparing runs.
 * @returns `{ routing, counts }` of `report`
 */
export function deterministicPart(report: ReplayReport): { routing: RoutingReport; counts: ReplayCountTotals } {
  return { routing: report.routing, counts: report.counts };
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
    `Restarts (workflow rebuilt from the store): ${n(m.restarts)}`,
    `Wall time: ${m.wallSeconds.toFixed(1)} s`,
  ].join('\n');
}
