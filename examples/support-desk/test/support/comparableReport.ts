import { formatReplayReport, type ReplayReport } from '../../src/replay/replayReport.js';

/**
 * A replay report less what is measured (times, and the bytes, which hold timestamps) and where it was
 * stored: what two runs of the same conversations must agree on, whatever their workers or lanes.
 */
export function deterministic(report: ReplayReport) {
  const { measurements, conversations: each, store: _store, ...rest } = report;
  const { trainings: _trainings, storeBytes: _bytes, bytesPerMessage: _perMessage, orchestrationMsPerTurn: _orchestration, modelMsPerTurn: _model, wallSeconds: _wall, trainingMs: _training, ...counted } = measurements;
  return { ...rest, measurements: counted, conversations: each.map(({ wallMs: _w, modelMs: _m, ...outcome }) => outcome) };
}

/** The printed report less its measured lines and its first line (which names the store). */
export const printed = (report: ReplayReport): string[] =>
  formatReplayReport(report)
    .split('\n')
    .filter((line) => !/^(Bytes stored|Mean orchestration|Offline models trained|Wall time|Support desk replay)/.test(line));
