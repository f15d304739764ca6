/** How one conversation was routed: its true ABCD flow, the specialist triage handed it to, the flow triage named. */
export interface RoutedConversation {
  flow: string;
  /** The first specialist triage handed off to; `null` when it never handed off. */
  routedTo: string | null;
  /** The flow named in that handoff's reason; `null` when none. */
  predictedFlow: string | null;
  /** The questions triage asked the customer before it routed (unknown: left out of {@link RoutingReport.byQuestions}). */
  clarifyingQuestions?: number;
  /**
   * The flow the last handoff that named one named: triage's first, or the one a specialist's hand-back named
   * (which triage passed on); `null` when none; unknown: left out of {@link RoutingReport.finalFlow}.
   */
  finalFlow?: string | null;
}

/** Correct out of total, their ratio (0 when total is 0), and its 95% Wilson score interval. */
export interface Accuracy {
  correct: number;
  total: number;
  accuracy: number;
  /** Lower end of the 95% Wilson score interval (0–1). */
  low: number;
  /** Upper end of the 95% Wilson score interval (0–1). */
  high: number;
}

/** Routing figures of a replay. */
export interface RoutingReport {
  /** Conversations handed to the specialist that covers their flow. */
  specialist: Accuracy;
  /** Conversations whose flow triage named exactly. */
  flow: Accuracy;
  /** Per true flow, in the order of `flows`. */
  perFlow: Array<{ flow: string; specialist: Accuracy; namedFlow: Accuracy }>;
  /** Counts by true flow (rows), then by the specialist routed to (`'none'` when there was no handoff). */
  confusion: Record<string, Record<string, number>>;
  /** The column order of `confusion`: the specialists, then `'none'`. */
  columns: string[];
  /** Flow named right, by how many questions triage asked before it routed (0 = routed at once), fewest first. */
  byQuestions: Array<{ questions: number; flow: Accuracy }>;
  /**
   * Conversations whose flow was named right by the last handoff that named one (after any hand-back), of those
   * whose `finalFlow` is known; `undefined` when none is.
   */
  finalFlow?: Accuracy;
}

/**
 * An accuracy with its 95% confidence interval by Wilson's score method (E. B. Wilson, "Probable
 * inference, the law of succession, and statistical inference", JASA 1927), which stays inside 0–1
 * and behaves at 0 and 100%.
 *
 * @param correct how many were right
 * @param total out of how many (an empty total gives accuracy 0 and the interval 0–1)
 * @example
 * ```ts
 * accuracy(70, 80); // { correct: 70, total: 80, accuracy: 0.875, low: 0.785…, high: 0.931… }
 * ```
 */
export function accuracy(correct: number, total: number): Accuracy {
  if (total === 0) return { correct, total, accuracy: 0, low: 0, high: 1 };
  const z = 1.959964;
  const p = correct / total;
  const centre = (p + (z * z) / (2 * total)) / (1 + (z * z) / total);
  const half = (z / (1 + (z * z) / total)) * Math.sqrt((p * (1 - p)) / total + (z * z) / (4 * total * total));
  return { correct, total, accuracy: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * Computes routing accuracy (overall, per flow) and the confusion table of true flow by specialist.
 *
 * @param flows the flows, in the order rows should appear (flows seen in `outcomes` but not listed are appended)
 * @param specialists the specialists, in the order columns should appear
 * @param specialistFor the specialist that covers a flow
 * @example
 * ```ts
 * computeRouting([{ flow: 'shipping_issue', routedTo: 'orders', predictedFlow: 'order_issue' }], ['shipping_issue'], ['orders'], () => 'orders');
 * // specialist 1/1, flow 0/1
 * ```
 */
export function computeRouting(
  outcomes: readonly RoutedConversation[],
  flows: readonly string[],
  specialists: readonly string[],
  specialistFor: (flow: string) => string | undefined,
): RoutingReport {
  const rows = [...flows, ...[...new Set(outcomes.map((o) => o.flow))].filter((flow) => !flows.includes(flow)).sort()];
  const columns = [...specialists, 'none'];
  const confusion: Record<string, Record<string, number>> = {};
  for (const flow of rows) confusion[flow] = Object.fromEntries(columns.map((c) => [c, 0]));
  for (const outcome of outcomes) {
    const row = confusion[outcome.flow]!;
    const column = outcome.routedTo ?? 'none';
    row[column] = (row[column] ?? 0) + 1;
    if (!columns.includes(column)) columns.splice(columns.length - 1, 0, column);
  }
  const isRight = (o: RoutedConversation) => o.routedTo !== null && o.routedTo === specialistFor(o.flow);
  const perFlow = rows.map((flow) => {
    const mine = outcomes.filter((o) => o.flow === flow);
    return {
      flow,
      specialist: accuracy(mine.filter(isRight).length, mine.length),
      namedFlow: accuracy(mine.filter((o) => o.predictedFlow === flow).length, mine.length),
    };
  });
  for (const row of Object.values(confusion)) for (const column of columns) row[column] ??= 0;
  const asked = [
    ...new Set(outcomes.flatMap((o) => (o.clarifyingQuestions === undefined ? [] : [o.clarifyingQuestions]))),
  ].sort((a, b) => a - b);
  const byQuestions = asked.map((questions) => {
    const mine = outcomes.filter((o) => o.clarifyingQuestions === questions);
    return { questions, flow: accuracy(mine.filter((o) => o.predictedFlow === o.flow).length, mine.length) };
  });
  const withFinal = outcomes.filter((o) => o.finalFlow !== undefined);
  return {
    specialist: accuracy(outcomes.filter(isRight).length, outcomes.length),
    flow: accuracy(outcomes.filter((o) => o.predictedFlow === o.flow).length, outcomes.length),
    perFlow,
    confusion,
    columns,
    byQuestions,
    ...(withFinal.length === 0
      ? {}
      : { finalFlow: accuracy(withFinal.filter((o) => o.finalFlow === o.flow).length, withFinal.length) }),
  };
}

const percent = (a: Accuracy) => `${(a.accuracy * 100).toFixed(1)}%`;

/**
 * An accuracy as the report prints it: `87.5% (70/80; 95% CI 78.5–93.1%)`.
 * @param a from {@link accuracy}
 */
export function formatAccuracy(a: Accuracy): string {
  return `${percent(a)} (${a.correct}/${a.total}; 95% CI ${(a.low * 100).toFixed(1)}–${(a.high * 100).toFixed(1)}%)`;
}

/**
 * Formats the routing figures as a text table: overall accuracy, then one row per flow that has
 * conversations, with its accuracies and its confusion counts by specialist.
 * @param report from {@link computeRouting}
 * @returns the text, lines joined by newlines
 */
export function formatRouting(report: RoutingReport): string {
  const width = Math.max(4, ...report.perFlow.map((row) => row.flow.length));
  const cell = (text: string, size: number) => text.padStart(size);
  const columns = report.columns.map((c) => Math.max(4, c.length));
  const header = `${'flow'.padEnd(width)}  ${cell('n', 4)}  ${cell('spec.', 7)}  ${cell('flow', 7)}  ${report.columns.map((c, i) => cell(c, columns[i]!)).join(' ')}`;
  const lines = report.perFlow
    .filter((row) => row.specialist.total > 0)
    .map((row) => {
      const counts = report.columns
        .map((c, i) => cell(String(report.confusion[row.flow]?.[c] ?? 0), columns[i]!))
        .join(' ');
      return `${row.flow.padEnd(width)}  ${cell(String(row.specialist.total), 4)}  ${cell(percent(row.specialist), 7)}  ${cell(percent(row.namedFlow), 7)}  ${counts}`;
    });
  return [
    `Routing accuracy (right specialist): ${formatAccuracy(report.specialist)}`,
    `Flow accuracy (triage named the flow): ${formatAccuracy(report.flow)}`,
    ...(report.byQuestions.length === 0
      ? []
      : [
          `Flow right by the questions triage asked first: ${report.byQuestions
            .map(
              ({ questions, flow }) =>
                `${questions === 0 ? 'none' : questions} ${percent(flow)} (${flow.correct}/${flow.total})`,
            )
            .join(', ')}`,
        ]),
    ...(report.finalFlow === undefined
      ? []
      : [
          `Flow at the end (the last handoff that named one, after any hand-back; not the flow accuracy): ${formatAccuracy(report.finalFlow)}`,
        ]),
    '',
    'Per flow: n, routed to the right specialist, flow named right; then counts by the specialist routed to (confusion)',
    header,
    ...lines,
  ].join('\n');
}
