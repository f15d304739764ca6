/**
 * The scenario every framework runs, and what the bench asks of each: a coordinator (`triage`) that
 * hands each customer message to a specialist (`billing`), which answers `re: <message>`; a message
 * that asks for a refund makes billing call `refund`, a tool that needs a human's approval, so the
 * turn pauses until it is approved. Models are instant fakes, so the time measured is each
 * framework's own; every framework keeps its state in its own in-memory persistence.
 */

/** The customer's text of turn `n` (each unique, so repeated inputs are visible as duplicates). */
export function customerText(n: number): string {
  return `Question ${n} about my invoice`;
}

/** The customer message that makes billing call the tool that needs approval. */
export const REFUND_TEXT = 'Please refund order 1234';

/** What billing answers to a customer text. */
export function answerTo(text: string): string {
  return `re: ${text}`;
}

/** One framework running the scenario on one conversation. */
export interface PeerRunner {
  /** Framework and version, for the table. */
  readonly name: string;
  /** Runs one handoff turn: the customer's `text`, triage hands off, billing answers. */
  turn(text: string): Promise<void>;
  /** Bytes the framework's persistence holds for the conversation now. */
  persistedBytes(): Promise<number>;
  /** Runs the refund turn, which must pause on the approval. */
  pauseOnApproval(): Promise<void>;
  /**
   * Restores the paused conversation from the persistence alone (new agent, model and graph
   * objects, as a new process would: built before the clock starts), approves the call and runs
   * the turn to its end.
   * @returns the milliseconds from the start of the restore to the end of the turn
   */
  restoreAndApprove(): Promise<number>;
  /**
   * The items of the first model input after the restore, each as a key that tells two copies of
   * one item apart from two different items (ids, call ids, or role and text, which are unique here).
   */
  inputAfterRestore(): string[];
}

/** How many keys occur more than once (each extra copy counts once). */
export function duplicates(keys: readonly string[]): number {
  return keys.length - new Set(keys).size;
}

/** Bytes of every string and byte array inside `value` (a persistence's own in-memory structures). */
export function deepBytes(value: unknown, seen = new Set<object>()): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value !== 'object' || value === null || seen.has(value)) return 0;
  seen.add(value);
  let total = 0;
  const entries =
    value instanceof Map ? [...value.entries()].flat() : Array.isArray(value) ? value : Object.entries(value).flat();
  for (const entry of entries) total += deepBytes(entry, seen);
  return total;
}
