import {
  createId,
  type ExecutorJournal,
  isoNow,
  type Message,
  type NewMessage,
  type PendingWrite,
  STATE_PATCHES_KEY,
} from '@baton/core';
import { isHandoffToolName } from '../routing/handoffTools.js';
import { applyRoutingEffect } from '../routing/replayHistory.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { ANSWERED_REQUEST_KEY } from '../config/answeredRequest.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';

/**
 * Core's {@link ExecutorJournal} for one session branch, over a buffer: `commit` does not write.
 * It gives messages the next seqs after the branch head kept in memory, appends them to the
 * in-memory history as not stored yet (the buffer: `runtime.history.unstored`; the executor sees
 * them at once) and applies each message's routing effect to the routing machine
 * ({@link applyRoutingEffect}: a handoff result hands off, an answer to the user ends the turn), so
 * a checkpoint saved after any commit holds a machine that agrees with its `throughSeq`. The
 * runtime's writer (`writeToStore` in runtime/storeWriter.ts) stores the buffer with one store write
 * per durability point: before any checkpoint, and when the turn settles, pauses, closes the
 * session or fails. A commit saves the checkpoints the frequency asks for: always right after an
 * assistant message with tool calls other than handoffs (pending writes attach to it, so the call is
 * stored before a tool runs), and after every commit in `'step'` mode. A tool result whose call
 * moved control (a handoff, the end of the conversation) is stored with `metadata.control`, so a
 * restore can replay routing from history alone.
 *
 * @example
 * ```ts
 * const journal = new BufferedJournal(runtime);
 * const [committed] = await journal.commit([{ role: 'user', content: 'Hi' }]); // seq assigned, stored at the next durability point
 * ```
 */
export class BufferedJournal implements ExecutorJournal {
  constructor(readonly runtime: SessionRuntime) {}

  get pendingWrites(): ReadonlyMap<string, PendingWrite> {
    return this.runtime.pendingWrites;
  }

  /**
   * @throws {ConcurrencyError} when a checkpoint this commit saves writes the buffered messages and
   *   another writer (process) already took one of their seqs; the runtime is marked stale and
   *   reloads on the next call. Nothing is retried blindly.
   */
  commit(newMessages: readonly NewMessage[]): Promise<Message[]> {
    // Not an async function: a commit that saves no checkpoint (most) is done synchronously, and
    // costs a resolved promise instead of an async function's state. A throw still rejects.
    try {
      return this.#commit(newMessages);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #commit(newMessages: readonly NewMessage[]): Promise<Message[]> {
    const runtime = this.runtime;
    const head = runtime.history.headSeq;
    const now = isoNow();
    const messages = newMessages.map((message, index) => this.#stored(message, head + index + 1, now));
    // Branch state changes made since the last commit are logged on this commit's last message, so
    // the messages tell the branch state as of any seq (what a fork at that seq starts from).
    const patches = runtime.state.takeNewBranchPatches();
    const last = messages.at(-1);
    if (patches.length > 0 && last !== undefined) last.metadata = { ...last.metadata, [STATE_PATCHES_KEY]: patches };
    runtime.history.append(messages, { stored: false });
    for (const message of messages) {
      if (message.role === 'tool' && message.toolCallId !== undefined) runtime.pendingWrites.delete(message.toolCallId);
      applyRoutingEffect(runtime.actor, message);
    }
    if (
      runtime.config.checkpointEvery === 'step' ||
      (last?.role === 'assistant' && last.toolCalls?.some((call) => !isHandoffToolName(call.name)))
    ) {
      return saveCheckpoint(runtime).then(() => messages);
    }
    return Promise.resolve(messages);
  }

  /**
   * Keeps a finished tool result; durable when the returned promise resolves (attached to the newest
   * checkpoint) unless it is a handoff's: a handoff tool is a pure function of the routing state, so
   * running it again after a crash gives the same result, and no checkpoint is spent on it. Calls may
   * overlap (parallel tools finishing together): results that finish while a write is in flight are
   * stored together by the next write (group commit), so a batch of N results costs at most two
   * writes in a row instead of N, and no finished result waits behind a sibling's write.
   */
  recordPendingWrite(write: PendingWrite): Promise<void> {
    const runtime = this.runtime;
    runtime.pendingWrites.set(write.toolCallId, write);
    if (isHandoffToolName(write.toolName)) return Promise.resolve();
    this.#waiting ??= [];
    this.#waiting.push(write);
    this.#nextWrite ??= this.#writeWaiting();
    return this.#nextWrite;
  }

  /** Results waiting for the next pending-writes write (made on the first; most turns have none). */
  #waiting: PendingWrite[] | undefined;
  /** The write that will store `#waiting` (it starts when the write in flight, if any, ends). */
  #nextWrite: Promise<void> | undefined;
  #inFlight: Promise<void> | undefined;

  #writeWaiting(): Promise<void> {
    const previous = this.#inFlight;
    const mine = (async () => {
      // One tick even for the first write: results finishing in the same tick join its batch.
      await previous?.catch(() => undefined);
      // From here on, results that finish join the write after this one.
      const batch = this.#waiting ?? [];
      this.#waiting = undefined;
      this.#nextWrite = undefined;
      const runtime = this.runtime;
      if (runtime.checkpoint === undefined) await saveCheckpoint(runtime);
      await runtime.config.store.putPendingWrites(
        runtime.sessionId,
        runtime.branchId,
        runtime.checkpoint!.id,
        batch,
        runtime.scope,
      );
    })();
    this.#inFlight = mine;
    return mine;
  }

  #stored(message: NewMessage, seq: number, now: string): Message {
    // `{ ...message, id, seq, createdAt }`, built in two steps: V8 runs a spread followed by more keys
    // in a slow path (about 2 µs per message here) and leaves the result with slow property access.
    const stored = copyOwn(message) as Message;
    stored.id = message.id ?? createId();
    stored.seq = seq;
    stored.createdAt = message.createdAt ?? now;
    if (message.role === 'tool' && message.toolCallId !== undefined && message.isError !== true) {
      const control = this.runtime.pendingWrites.get(message.toolCallId)?.control;
      if (control !== undefined) stored.metadata = { ...message.metadata, control };
    }
    const answered =
      message.role === 'tool' && message.toolCallId !== undefined
        ? this.runtime.answeredRequests.get(message.toolCallId)
        : undefined;
    if (answered !== undefined) {
      stored.metadata = { ...stored.metadata, [ANSWERED_REQUEST_KEY]: answered };
      this.runtime.answeredRequests.delete(message.toolCallId!);
    }
    return stored;
  }
}

/** `{ ...value }` (own enumerable keys, in order, as data properties). */
function copyOwn<T extends object>(value: T): T {
  // Object.assign sets keys, so an own `__proto__` key would set the prototype instead: spread that rare case.
  return Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
}
