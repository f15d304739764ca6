import { type ProviderState, ProviderStateTooLargeError, type State } from '@baton/core';
import type { SummaryCache } from './historySummarizer.js';

/** How many summaries working memory keeps in a branch's state: the newest, one per dropped prefix (e.g. per agent). */
export const KEPT_SUMMARIES = 4;

/** The key of working memory's branch slice that holds its summaries: `{ [prefix key]: summary }`, oldest first. */
const SUMMARIES = 'summaries';

/**
 * Working memory's summaries kept in its slice of branch state (`provider:working-memory` →
 * `summaries`), so they are stored with the session: a restarted process reuses them instead of
 * asking the model again, and a fork starts from the summaries as of its fork point. Each is keyed
 * by a hash of the exact messages it covers (their ids), so a branch never uses a summary of
 * messages it does not have. At most {@link KEPT_SUMMARIES} are kept (the newest); when the slice
 * would exceed its bound, only the newest is kept, and when even that does not fit it is not kept
 * and `onError` gets the {@link ProviderStateTooLargeError}.
 *
 * @param state working memory's slice of state, from its `prepareModelInput` context
 * @param onError told when a summary cannot be kept
 * @returns the cache for {@link HistorySummarizer.summarize}
 * @example
 * ```ts
 * const summary = await summarizer.summarize(dropped, 256, branchSummaryCache(context.state));
 * ```
 */
export function branchSummaryCache(state: ProviderState, onError?: (error: unknown) => void): SummaryCache {
  return {
    get(key) {
      const summary = summariesOf(state.branch)?.[key];
      return typeof summary === 'string' ? summary : undefined;
    },
    set(key, summary) {
      try {
        keep(state, key, summary, KEPT_SUMMARIES);
      } catch (error) {
        if (!(error instanceof ProviderStateTooLargeError)) throw error;
        try {
          keep(state, key, summary, 1);
        } catch (again) {
          onError?.(again);
        }
      }
    },
  };
}

function keep(state: ProviderState, key: string, summary: string, most: number): void {
  state.update('branch', (draft) => {
    if (summariesOf(draft) === undefined) draft[SUMMARIES] = {};
    const kept = draft[SUMMARIES] as Record<string, unknown>;
    delete kept[key];
    kept[key] = summary;
    const keys = Object.keys(kept);
    for (const old of keys.slice(0, Math.max(0, keys.length - most))) delete kept[old];
  });
}

function summariesOf(slice: Readonly<State>): Readonly<Record<string, unknown>> | undefined {
  const value = slice[SUMMARIES];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
