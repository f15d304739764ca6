import { type Message, type ModelMessage, toModelMessage } from '../conversation/message.js';

/** The model view of a history array, converted so far: `models[i]` is `toModelMessage(history[i])` for `i < models.length`. */
interface ConvertedHistory {
  models: ModelMessage[];
  /** `history[models.length - 1]` when it was converted, to notice an array that was changed rather than appended to. */
  last: Message | undefined;
}

/**
 * Model views of history arrays, extended as they grow. A runtime that passes the same growing
 * array to every activation (as the handoff runtime does) gets each message converted once over a
 * conversation instead of once per model call; any other array is converted on first use.
 */
const convertedHistories = new WeakMap<readonly Message[], ConvertedHistory>();

/** The model view of `history[0..length)`, reusing and extending earlier conversions of the same array. */
export function modelMessagesOf(history: readonly Message[], length: number): readonly ModelMessage[] {
  let entry = convertedHistories.get(history);
  const known = entry?.models.length ?? 0;
  if (entry === undefined || known > history.length || (known > 0 && history[known - 1] !== entry.last)) {
    entry = { models: [], last: undefined };
    convertedHistories.set(history, entry);
  }
  for (let i = entry.models.length; i < length; i += 1) entry.models.push(toModelMessage(history[i]!));
  entry.last = history[entry.models.length - 1];
  return entry.models;
}
