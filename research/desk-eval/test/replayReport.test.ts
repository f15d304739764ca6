import { describe, expect, it } from 'vitest';
import { ranInOrder } from '../src/replayConversation.js';
import { calibrationOf } from '../src/replayReport.js';

describe('calibrationOf', () => {
  it('gives the mean confidence, the accuracy and the expected calibration error over 10 bins', () => {
    const report = calibrationOf([
      { confidence: 0.9, right: true },
      { confidence: 0.6, right: false },
    ])!;
    expect(report.routed).toBe(2);
    expect(report.meanConfidence).toBeCloseTo(0.75, 9);
    expect(report.accuracy).toBe(0.5);
    // Bin 0.9: |0.9 - 1| = 0.1; bin 0.6: |0.6 - 0| = 0.6; each weighs one half.
    expect(report.expectedCalibrationError).toBeCloseTo(0.35, 9);
    expect(calibrationOf([{ confidence: 1, right: true }])!.expectedCalibrationError).toBe(0);
    expect(calibrationOf([])).toBeUndefined();
  });
});

describe('ranInOrder', () => {
  it('finds the expected sequence in order among other actions, and not out of order or in part', () => {
    const expected = ['pull-up-account', 'validate-purchase', 'offer-refund'];
    expect(ranInOrder(expected, ['pull-up-account', 'record-reason', 'validate-purchase', 'offer-refund'])).toBe(true);
    expect(ranInOrder(expected, ['validate-purchase', 'pull-up-account', 'offer-refund'])).toBe(false);
    expect(ranInOrder(expected, ['pull-up-account', 'validate-purchase'])).toBe(false);
    expect(ranInOrder([], ['pull-up-account'])).toBe(false);
  });
});
