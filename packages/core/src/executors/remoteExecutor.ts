import pRetry, { AbortError as StopRetrying } from 'p-retry';
import type { BatonEvent } from '../conversation/events.js';
import { toModelMessage } from '../conversation/message.js';
import { AbortedError, RemoteExecutorError, type RemoteFailure } from '../errors.js';
import { addUsage, emptyUsage, type Usage } from '../models/modelClient.js';
import type { Executor, ExecutorInput, ExecutorOutcome } from './executor.js';
import { REMOTE_WIRE_VERSION, RemoteStepEventSchema, type RemoteStepRequest, readLines } from './remoteWireFormat.js';

/** What `new RemoteExecutor(…)` takes. */
export interface RemoteExecutorOptions {
  /** The participant's name (used in `handoff_to_<name>`). */
  name: string;
  /** What other agents see when they may hand off to it. */
  description: string;
  /** The service's endpoint; each activation is one POST to it. */
  url: string | URL;
  /** Extra request headers (e.g. authorization), or a function giving them per request. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** Time limit of one attempt, request and whole answer, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /**
   * Attempts after the first (default 2), for failures before the answer starts: the connection
   * failed, the attempt timed out before the status arrived, or the status was 408, 429 or 5xx.
   * Backoff doubles from `minRetryDelayMs`. Once a 200 answer streams, nothing is retried.
   */
  retries?: number;
  /** The first retry's delay in milliseconds (default 200). */
  minRetryDelayMs?: number;
}

/**
 * A participant served by another service over HTTP. Each activation POSTs a
 * {@link RemoteStepRequest} (the history as model messages, session and branch ids, turn) and reads
 * the answer as JSON Lines ({@link RemoteStepEvent}: `delta`…, then `reply`, `handoff` or
 * `end_conversation`). Deltas become `message.delta` events; a `reply` is committed as this
 * participant's assistant message. Retries use `p-retry` (exponential backoff). Every failure is a
 * {@link RemoteExecutorError} naming the URL, the attempts and what failed; a cancelled turn throws
 * `AbortedError`.
 *
 * @example
 * ```ts
 * import { RemoteExecutor } from '@baton/core';
 * const shipping = new RemoteExecutor({ name: 'shipping', description: 'Parcels and deliveries.', url: 'http://127.0.0.1:8080/step', timeoutMs: 10_000 });
 * // new HandoffBuilder().participants(triage, shipping)…
 * ```
 */
export class RemoteExecutor implements Executor {
  readonly name: string;
  readonly description: string;
  readonly #options: RemoteExecutorOptions;

  constructor(options: RemoteExecutorOptions) {
    this.name = options.name;
    this.description = options.description;
    this.#options = options;
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const url = String(this.#options.url);
    const body: RemoteStepRequest = {
      version: REMOTE_WIRE_VERSION,
      participant: this.name,
      sessionId: input.sessionId,
      branchId: input.branchId,
      turn: input.turn,
      messages: input.history.map(toModelMessage),
    };
    if (input.context !== undefined) body.context = input.context;
    if (input.turnSettings?.instructions !== undefined) body.instructions = input.turnSettings.instructions;
    const { response, signal, clear, attempts } = await this.#post(url, JSON.stringify(body), input.signal);
    const fail = (failure: RemoteFailure, message: string, cause?: unknown) =>
      new RemoteExecutorError(`Remote participant ${JSON.stringify(this.name)} at ${url}: ${message}`, {
        failure,
        url,
        status: response.status,
        attempts,
        cause,
      });

    const base = { sessionId: input.sessionId, branchId: input.branchId };
    let usage: Usage = { ...emptyUsage(), requests: 1 };
    let lineNumber = 0;
    try {
      for await (const line of readLines(response.body!)) {
        lineNumber += 1;
        if (line.trim() === '') continue;
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch (cause) {
          throw fail(
            'protocol',
            `line ${lineNumber} of the answer is not JSON: ${JSON.stringify(line.slice(0, 120))}.`,
            cause,
          );
        }
        const parsed = RemoteStepEventSchema.safeParse(json);
        if (!parsed.success) {
          throw fail(
            'protocol',
            `line ${lineNumber} is not a step event (delta, usage, reply, handoff, end_conversation): ${JSON.stringify(line.slice(0, 120))}.`,
            parsed.error,
          );
        }
        const event = parsed.data;
        if (event.type === 'delta') yield { type: 'message.delta', ...base, agent: this.name, delta: event.text };
        else if (event.type === 'usage') {
          usage = addUsage(usage, {
            inputTokens: event.inputTokens,
            outputTokens: event.outputTokens,
            totalTokens: event.inputTokens + event.outputTokens,
            requests: 0,
          });
        } else if (event.type === 'handoff') {
          return event.reason === undefined
            ? { type: 'handoff', target: event.target, usage }
            : { type: 'handoff', target: event.target, reason: event.reason, usage };
        } else if (event.type === 'end_conversation') return { type: 'end_conversation', reason: event.reason, usage };
        else {
          const [message] = await input.journal.commit([{ role: 'assistant', agent: this.name, content: event.text }]);
          if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
          yield { type: 'message', ...base, message };
          return { type: 'reply', message, usage };
        }
      }
    } catch (error) {
      if (error instanceof RemoteExecutorError) throw error;
      if (input.signal.aborted) throw new AbortedError('The turn was cancelled.', { cause: input.signal.reason });
      if (signal.aborted) throw fail('timeout', `the answer did not finish within ${this.#timeoutMs} ms.`, error);
      throw fail(
        'network',
        `reading the answer failed (${error instanceof Error ? error.message : String(error)}).`,
        error,
      );
    } finally {
      clear();
      response.body?.cancel().catch(() => undefined);
    }
    throw fail('protocol', 'the answer ended without a reply, handoff or end_conversation line.');
  }

  get #timeoutMs(): number {
    return this.#options.timeoutMs ?? 30_000;
  }

  /** POSTs `body` with retries; resolves with the first 2xx response and the signal that limits reading it. */
  async #post(
    url: string,
    body: string,
    cancel: AbortSignal,
  ): Promise<{ response: Response; signal: AbortSignal; clear: () => void; attempts: number }> {
    let attempts = 0;
    const headers =
      typeof this.#options.headers === 'function' ? await this.#options.headers() : (this.#options.headers ?? {});
    const error = (failure: RemoteFailure, message: string, options: { status?: number; cause?: unknown } = {}) =>
      new RemoteExecutorError(
        `Remote participant ${JSON.stringify(this.name)} at ${url}: ${message} (attempt ${attempts}).`,
        { failure, url, attempts, ...options },
      );
    try {
      return await pRetry(
        async () => {
          attempts += 1;
          const { signal, clear } = attemptDeadline(cancel, this.#timeoutMs);
          let response: Response;
          try {
            response = await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/x-ndjson', ...headers },
              body,
              signal,
            });
          } catch (cause) {
            clear();
            if (cancel.aborted)
              throw new StopRetrying(new AbortedError('The turn was cancelled.', { cause: cancel.reason }));
            if (signal.aborted) throw error('timeout', `no answer within ${this.#timeoutMs} ms`, { cause });
            throw error('network', `the request failed (${cause instanceof Error ? cause.message : String(cause)})`, {
              cause,
            });
          }
          if (response.ok && response.body !== null) return { response, signal, clear, attempts };
          const text = await response.text().catch(() => '');
          clear();
          const failure = error(
            'status',
            `answered HTTP ${response.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`,
            { status: response.status },
          );
          if (response.status === 408 || response.status === 429 || response.status >= 500) throw failure;
          throw new StopRetrying(failure);
        },
        {
          retries: this.#options.retries ?? 2,
          minTimeout: this.#options.minRetryDelayMs ?? 200,
          factor: 2,
          signal: cancel,
        },
      );
    } catch (caught) {
      if (caught instanceof RemoteExecutorError || caught instanceof AbortedError) throw caught;
      if (cancel.aborted) throw new AbortedError('The turn was cancelled.', { cause: cancel.reason });
      throw error('network', `the request failed (${caught instanceof Error ? caught.message : String(caught)})`, {
        cause: caught,
      });
    }
  }
}

/**
 * One attempt's signal: it aborts when the turn is cancelled or `ms` milliseconds after the attempt
 * starts, whichever comes first; `clear()` stops the timer once the attempt is over. Built from an
 * `AbortController` and a timer that holds it, not `AbortSignal.any([cancel, AbortSignal.timeout(ms)])`:
 * an `any` signal holds its sources weakly and the timeout's timer holds its signal weakly, so a
 * garbage collection can drop the timeout before it fires and leave a request to a silent service
 * waiting for ever (nodejs/node#57736, reproduced on Node 20.20; `remoteExecutor.test.ts`).
 */
function attemptDeadline(cancel: AbortSignal, ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort(cancel.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`The attempt took longer than ${ms} ms.`, 'TimeoutError')),
    ms,
  );
  if (cancel.aborted) onCancel();
  else cancel.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    },
  };
}
