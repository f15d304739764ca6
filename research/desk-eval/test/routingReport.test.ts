import { describe, expect, it } from 'vitest';
import { computeRouting, formatRouting, type RoutedConversation } from '../src/routingReport.js';

// A hand-made case: two flows share the specialist "orders"; "returns" covers defects.
const specialistFor = (flow: string) =>
  ({ order_issue: 'orders', shipping_issue: 'orders', product_defect: 'returns' })[flow];
const flows = ['order_issue', 'shipping_issue', 'product_defect'];
const specialists = ['orders', 'returns'];

const outcomes: RoutedConversation[] = [
  { flow: 'order_issue', routedTo: 'orders', predictedFlow: 'order_issue' }, // right specialist, right flow
  { flow: 'order_issue', routedTo: 'orders', predictedFlow: 'shipping_issue' }, // right specialist, wrong flow
  { flow: 'order_issue', routedTo: 'returns', predictedFlow: 'product_defect' }, // wrong
  { flow: 'shipping_issue', routedTo: 'orders', predictedFlow: 'shipping_issue' }, // right, right
  { flow: 'shipping_issue', routedTo: null, predictedFlow: null }, // never routed
  { flow: 'product_defect', routedTo: 'returns', predictedFlow: 'product_defect' }, // right, right
];

describe('computeRouting', () => {
  const report = computeRouting(outcomes, flows, specialists, specialistFor);

  it('counts a conversation as routed right when it reached the specialist covering its flow', () => {
    expect(report.specialist).toMatchObject({ correct: 4, total: 6, accuracy: 4 / 6 });
  });

  it('counts the flow as right only when triage named exactly the true flow', () => {
    expect(report.flow).toMatchObject({ correct: 3, total: 6, accuracy: 0.5 });
    // The 95% Wilson interval of 3/6 (Wilson 1927): 18.8% to 81.2%.
    expect(report.flow.low).toBeCloseTo(0.1876, 3);
    expect(report.flow.high).toBeCloseTo(0.8124, 3);
  });

  it('gives accuracy per flow in the order of the flows', () => {
    expect(
      report.perFlow.map((row) => [row.flow, row.specialist.correct, row.namedFlow.correct, row.specialist.total]),
    ).toEqual([
      ['order_issue', 2, 1, 3],
      ['shipping_issue', 1, 1, 2],
      ['product_defect', 1, 1, 1],
    ]);
  });

  it('builds the confusion table of true flow by specialist, with a column for no handoff', () => {
    expect(report.columns).toEqual(['orders', 'returns', 'none']);
    expect(report.confusion).toEqual({
      order_issue: { orders: 2, returns: 1, none: 0 },
      shipping_issue: { orders: 1, returns: 0, none: 1 },
      product_defect: { orders: 0, returns: 1, none: 0 },
    });
  });

  it('adds a column for a specialist that was not listed, and gives 0 accuracy for no conversation', () => {
    const odd = computeRouting(
      [{ flow: 'order_issue', routedTo: 'billing', predictedFlow: null }],
      flows,
      specialists,
      specialistFor,
    );
    expect(odd.columns).toEqual(['orders', 'returns', 'billing', 'none']);
    expect(odd.confusion.order_issue).toEqual({ orders: 0, returns: 0, billing: 1, none: 0 });
    expect(odd.perFlow.find((row) => row.flow === 'product_defect')?.specialist).toEqual({
      correct: 0,
      total: 0,
      accuracy: 0,
      low: 0,
      high: 1,
    });
    expect(formatRouting(odd)).not.toContain('product_defect');
  });

  it('formats the figures as a table a reader can check', () => {
    const text = formatRouting(report);
    expect(text).toContain('Routing accuracy (right specialist): 66.7% (4/6; 95% CI 30.0–90.3%)');
    expect(text).toContain('Flow accuracy (triage named the flow): 50.0% (3/6; 95% CI 18.8–81.2%)');
    expect(text).toMatch(/order_issue\s+3\s+66\.7%\s+33\.3%\s+2\s+1\s+0/);
    expect(text).toMatch(/shipping_issue\s+2\s+50\.0%\s+50\.0%\s+1\s+0\s+1/);
  });
});

describe('flow accuracy by the questions triage asked first', () => {
  it('splits the conversations by how many questions triage asked before it routed, and prints it', () => {
    const asked: RoutedConversation[] = [
      { flow: 'order_issue', routedTo: 'orders', predictedFlow: 'order_issue', clarifyingQuestions: 0 },
      { flow: 'order_issue', routedTo: 'orders', predictedFlow: 'order_issue', clarifyingQuestions: 0 },
      { flow: 'shipping_issue', routedTo: 'orders', predictedFlow: 'order_issue', clarifyingQuestions: 2 },
      { flow: 'product_defect', routedTo: 'returns', predictedFlow: 'product_defect', clarifyingQuestions: 2 },
    ];
    const report = computeRouting(asked, flows, specialists, specialistFor);
    expect(report.byQuestions.map(({ questions, flow }) => [questions, flow.correct, flow.total])).toEqual([
      [0, 2, 2],
      [2, 1, 2],
    ]);
    expect(formatRouting(report)).toContain(
      'Flow right by the questions triage asked first: none 100.0% (2/2), 2 50.0% (1/2)',
    );
    expect(computeRouting(outcomes, flows, specialists, specialistFor).byQuestions).toEqual([]);
  });
});

describe('the flow at the end', () => {
  it('counts the flow the last handoff named (a hand-back that corrects it, or one that spoils it) apart from the flow accuracy', () => {
    const handedBack: RoutedConversation[] = [
      // Triage named shipping_issue; the specialist handed back naming order_issue, the true flow.
      { flow: 'order_issue', routedTo: 'orders', predictedFlow: 'shipping_issue', finalFlow: 'order_issue' },
      // Right at first, spoiled by a hand-back.
      { flow: 'product_defect', routedTo: 'returns', predictedFlow: 'product_defect', finalFlow: 'order_issue' },
      { flow: 'shipping_issue', routedTo: 'orders', predictedFlow: 'shipping_issue', finalFlow: 'shipping_issue' },
      { flow: 'shipping_issue', routedTo: null, predictedFlow: null, finalFlow: null },
    ];
    const report = computeRouting(handedBack, flows, specialists, specialistFor);
    expect(report.flow).toMatchObject({ correct: 2, total: 4 });
    expect(report.finalFlow).toMatchObject({ correct: 2, total: 4 });
    expect(computeRouting(handedBack.slice(0, 1), flows, specialists, specialistFor)).toMatchObject({
      flow: { correct: 0 },
      finalFlow: { correct: 1, total: 1 },
    });
    expect(formatRouting(report)).toContain(
      'Flow at the end (the last handoff that named one, after any hand-back; not the flow accuracy): 50.0% (2/4; 95% CI 15.0–85.0%)',
    );
    // Unknown when no outcome carries it: no line.
    expect(computeRouting(outcomes, flows, specialists, specialistFor).finalFlow).toBeUndefined();
    expect(formatRouting(computeRouting(outcomes, flows, specialists, specialistFor))).not.toContain('Flow at the end');
  });
});
