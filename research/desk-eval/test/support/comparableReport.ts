import { expect } from 'vitest';
import { formatReplayReport, type ReplayReport } from '../../src/replayReport.js';

/**
 * A replay report less what is measured (times, and the bytes, which hold timestamps) and where it was
 * stored: what two runs of the same conversations must agree on, whatever their workers or lanes.
 */
export function deterministic(report: ReplayReport) {
  const { measurements, conversations: each, store: _store, ...rest } = report;
  const {
    trainings: _trainings,
    storeBytes: _bytes,
    bytesPerMessage: _perMessage,
    orchestrationMsPerTurn: _orchestration,
    modelMsPerTurn: _model,
    wallSeconds: _wall,
    trainingMs: _training,
    ...counted
  } = measurements;
  return {
    ...rest,
    measurements: counted,
    conversations: each.map(({ wallMs: _w, modelMs: _m, ...outcome }) => outcome),
  };
}

/** The printed report less its measured lines and its first line (which names the store). */
export const printed = (report: ReplayReport): string[] =>
  formatReplayReport(report)
    .split('\n')
    .filter(
      (line) => !/^(Bytes stored|Mean orchestration|Offline models trained|Wall time|Support desk replay)/.test(line),
    );

/**
 * Asserts that two replays of the same conversations agree on everything but what is measured: the
 * report ({@link deterministic}), its printed lines ({@link printed}), the outcomes in input order, and the
 * order of the per-conversation and per-agent token counts.
 */
export function expectSameReport(actual: ReplayReport, expected: ReplayReport): void {
  expect(deterministic(actual)).toStrictEqual(deterministic(expected));
  expect(printed(actual)).toStrictEqual(printed(expected));
  expect(actual.conversations.map((c) => c.id)).toStrictEqual(expected.conversations.map((c) => c.id));
  // Per-conversation tokens keep the conversations' order; the agents keep their first-seen order.
  expect(Object.keys(actual.cost!.perConversation)).toStrictEqual(Object.keys(expected.cost!.perConversation));
  expect(Object.keys(actual.cost!.perAgent)).toStrictEqual(Object.keys(expected.cost!.perAgent));
}
