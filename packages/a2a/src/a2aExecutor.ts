import { randomUUID } from 'node:crypto';
import { type Message as A2AMessage, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import {
  AbortedError,
  type BatonEvent,
  ConfigurationError,
  createId,
  type Executor,
  type ExecutorInput,
  type ExecutorOutcome,
  emptyUsage,
  type Message,
  RemoteExecutorError,
  type ToolCall,
} from '@baton/core';
import { A2AAuthRequiredError } from './a2aAuthRequiredError.js';
import { textOf, userMessage } from './a2aMessages.js';

/** The built-in tool name a paused remote task is recorded under (`@baton/handoff`'s `request_user_input`). */
const REQUEST_USER_INPUT = 'request_user_input';

/** HTTP headers as name → value (e.g. `{ authorization: 'Bearer <token>' }`). */
export type A2AHeaders = Record<string, string>;

/** What `new A2AExecutor(…)` takes. */
export interface A2AExecutorOptions {
  /** The participant's name (used in `handoff_to_<name>`). */
  name: string;
  /** What other agents see when they may hand off to it (the remote card's description is not fetched for it). */
  description: string;
  /** The remote agent's base URL (its card is read from `<url>/.well-known/agent-card.json`). */
  url: string;
  /**
   * Credentials for a remote agent that requires them (e.g. a Baton `a2aApp` with `authenticate`):
   * headers sent with every HTTP request to it (its agent card included), either fixed, or a function
   * called before each request (so an expiring token is refreshed there; it may cache the token).
   * The request's own headers (content type, `A2A-Version`) win over them.
   */
  headers?: A2AHeaders | (() => A2AHeaders | Promise<A2AHeaders>);
  /**
   * The `fetch` the client uses (default: the global one), e.g. the SDK's
   * `createAuthenticatingFetchWithRetry(fetch, handler)` to retry a refused request with new headers.
   * `headers` are added before it is called.
   */
  fetch?: typeof fetch;
  /**
   * A client of the SDK to use instead of one built from `url` (custom transports, interceptors).
   * Not with `headers` or `fetch` (give those to its transports).
   */
  client?: Client;
}

/** Where this participant's remote conversation stands, in branch state under `a2a:<name>`. */
export interface A2AThreadState {
  /** The remote A2A context of this branch (one per branch, made at the first activation). */
  contextId: string;
  /** The remote task waiting for input (`input-required`), while one waits. */
  taskId?: string;
}

/**
 * A participant that is a remote A2A agent. Each activation sends the user's last message (over the
 * SDK's client, `SendMessage`, blocking) in one remote context per branch, and ends as the remote
 * task does: `completed` commits its answer (artifacts' text, else the status message) as this
 * participant's reply; `input-required` (never `auth-required`, see {@link A2AAuthRequiredError})
 * pauses the Baton turn with a `user_input` request (stored as this participant's
 * `request_user_input` call, the remote prompt as its prompt) whose answer is sent to the same
 * remote task. The remote context and waiting task id live in branch state
 * (`a2a:<name>`, see {@link A2AThreadState}), so checkpoints carry them and a restart of either
 * side resumes the remote task. The user's answer is committed once the remote task took it, so an
 * answer the remote refused (or never got) stays a pending write that `session.resume()` sends again.
 * A remote that requires credentials (e.g. Baton's `a2aApp` with `authenticate`) gets them from
 * `headers` (fixed, or a function called before each request, where a token is refreshed) or `fetch`.
 *
 * @throws {RemoteExecutorError} (from `execute`) naming the participant and URL: `failure: 'status'`
 *   with `status: 401 | 403` when the remote refused the credentials (the message says to give
 *   `headers`), another `status` for another HTTP error; `'status'` also for a `failed`, `rejected` or
 *   `canceled` task (the remote's message); `'network'` when it cannot be reached.
 * @throws {A2AAuthRequiredError} (a `RemoteExecutorError`, from `execute`) for a remote task in
 *   `auth-required`: the remote needs the client's credentials, so the user is not asked; it names the task.
 * @example
 * ```ts
 * import { A2AExecutor } from '@baton/a2a';
 * const url = 'http://127.0.0.1:4001';
 * const billing = new A2AExecutor({ name: 'billing', description: 'Refunds and invoices.', url });
 * // An agent that requires a bearer token; `tokens.current()` is called before each request (and may refresh).
 * const secured = new A2AExecutor({
 *   name: 'billing',
 *   description: 'Refunds and invoices.',
 *   url,
 *   headers: async () => ({ authorization: `Bearer ${await tokens.current()}` }),
 * });
 * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).build();
 * ```
 */
export class A2AExecutor implements Executor {
  readonly name: string;
  readonly description: string;
  readonly #url: string;
  readonly #fetch: typeof fetch;
  /** The HTTP status of a refused request (not 2xx), by the request's signal (the card's: by {@link CARD}). */
  readonly #refused = new WeakMap<object, number>();
  #client: Promise<Client> | undefined;

  /**
   * @throws {ConfigurationError} when `client` is given with `headers` or `fetch`
   */
  constructor(options: A2AExecutorOptions) {
    this.name = options.name;
    this.description = options.description;
    this.#url = options.url;
    if (options.client !== undefined && (options.headers !== undefined || options.fetch !== undefined))
      throw new ConfigurationError(
        `A2AExecutor ${JSON.stringify(options.name)}: \`client\` cannot be given with \`headers\` or \`fetch\`; ` +
          "give the headers to the client's transports (their `fetchImpl`), or drop `client`.",
      );
    this.#fetch = this.#observed(withHeaders(options.fetch ?? fetch, options.headers));
    if (options.client !== undefined) this.#client = Promise.resolve(options.client);
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const base = { sessionId: input.sessionId, branchId: input.branchId };
    const key = `a2a:${this.name}`;
    const thread = (input.state.branch[key] as A2AThreadState | undefined) ?? { contextId: randomUUID() };
    let text: string;
    let taskId: string | undefined;
    const open = this.#openCall(input.history);
    const write = open === undefined ? undefined : input.journal.pendingWrites.get(open.id);
    if (open !== undefined) {
      // The user answered the remote agent's question: send it to the waiting task (committed once sent).
      if (write === undefined)
        throw this.#error('protocol', `the request ${open.id} of ${this.name} was resumed without an answer.`);
      text = write.content;
      taskId = thread.taskId;
    } else {
      text = input.history.findLast((m) => m.role === 'user')?.content ?? '';
    }
    const message = userMessage(
      text,
      taskId === undefined ? { contextId: thread.contextId } : { contextId: thread.contextId, taskId },
    );
    // A signal of this call alone: the key under which the fetch notes a refusal (see #observed).
    const signal = AbortSignal.any([input.signal]);
    let result: Task | A2AMessage;
    try {
      const client = await this.#connect();
      result = await client.sendMessage(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        { signal },
      );
    } catch (cause) {
      if (input.signal.aborted) throw new AbortedError('The turn was cancelled.', { cause: input.signal.reason });
      throw this.#failure(cause, this.#refused.get(signal) ?? this.#refused.get(CARD));
    }
    if (open !== undefined && write !== undefined) {
      // Committed only now: a refused or failed send leaves the question open, to be answered again.
      const [answer] = await input.journal.commit([
        {
          role: 'tool',
          agent: this.name,
          content: write.content,
          toolCallId: open.id,
          toolName: REQUEST_USER_INPUT,
          isError: false,
          durationMs: write.durationMs,
        },
      ]);
      if (answer !== undefined) yield { type: 'message', ...base, message: answer };
    }
    const usage = { ...emptyUsage(), requests: 1 };
    if (!('status' in result))
      return yield* this.#reply(input, textOf(result.parts), usage, key, { contextId: thread.contextId });
    const state = result.status?.state;
    const said = textOf(result.status?.message?.parts);
    if (state === TaskState.TASK_STATE_AUTH_REQUIRED) {
      // The remote needs the client's credentials, not the user's answer: nothing to ask the user.
      const contextId = result.contextId || thread.contextId;
      input.state.update('branch', (draft) => {
        draft[key] = { contextId };
      });
      throw new A2AAuthRequiredError(
        `Remote A2A participant ${JSON.stringify(this.name)} at ${this.#url}: the remote task ${result.id} needs ` +
          `authentication (auth-required)${said === '' ? '' : `: ${said}`}. It needs credentials, not an answer ` +
          'from the user: authorize as the remote asks (out of band), or give new A2AExecutor({ …, headers }) ' +
          'a token it accepts, then resume the turn (session.resume()).',
        { url: this.#url, attempts: 1, taskId: result.id, contextId },
      );
    }
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      input.state.update('branch', (draft) => {
        draft[key] = { contextId: result.contextId || thread.contextId, taskId: result.id };
      });
      const prompt = said === '' ? `${this.name} needs more input.` : said;
      const call: ToolCall = {
        id: `call_${createId()}`,
        name: REQUEST_USER_INPUT,
        arguments: JSON.stringify({ prompt }),
      };
      const [asked] = await input.journal.commit([
        { role: 'assistant', agent: this.name, content: '', toolCalls: [call], metadata: { a2aTaskId: result.id } },
      ]);
      if (asked !== undefined) yield { type: 'message', ...base, message: asked };
      return {
        type: 'requests',
        requests: [{ type: 'user_input', agent: this.name, toolCallId: call.id, prompt }],
        usage,
      };
    }
    const answered: A2AThreadState = { contextId: result.contextId || thread.contextId };
    if (state === TaskState.TASK_STATE_COMPLETED) {
      const artifacts = result.artifacts
        .map((a) => textOf(a.parts))
        .filter((t) => t !== '')
        .join('\n');
      const lastAgent = result.history.findLast((m) => m.role === Role.ROLE_AGENT);
      return yield* this.#reply(input, artifacts || said || textOf(lastAgent?.parts), usage, key, answered);
    }
    input.state.update('branch', (draft) => {
      draft[key] = answered;
    });
    throw this.#error(
      'status',
      `the remote task ${result.id} ended ${stateName(state)}${said === '' ? '' : `: ${said}`}.`,
    );
  }

  async *#reply(
    input: ExecutorInput,
    text: string,
    usage: ExecutorOutcome['usage'],
    key: string,
    thread: A2AThreadState,
  ): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    input.state.update('branch', (draft) => {
      draft[key] = thread;
    });
    const [message] = await input.journal.commit([{ role: 'assistant', agent: this.name, content: text }]);
    if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
    yield { type: 'message', sessionId: input.sessionId, branchId: input.branchId, message };
    return { type: 'reply', message, usage };
  }

  /** This participant's `request_user_input` call at the end of the history, when it has no result yet. */
  #openCall(history: readonly Message[]): ToolCall | undefined {
    const last = history.at(-1);
    if (last?.role !== 'assistant' || last.agent !== this.name) return undefined;
    return last.toolCalls?.find((call) => call.name === REQUEST_USER_INPUT);
  }

  #connect(): Promise<Client> {
    this.#refused.delete(CARD);
    const fetchImpl = this.#fetch;
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    });
    this.#client ??= new ClientFactory(options).createFromUrl(this.#url).catch((error: unknown) => {
      this.#client = undefined; // try again at the next activation
      throw error;
    });
    return this.#client;
  }

  /** `fetch`, noting the status of a refused request under its signal (the card's, without one, under CARD). */
  #observed(inner: typeof fetch): typeof fetch {
    return async (url, init) => {
      const response = await inner(url, init);
      if (!response.ok) this.#refused.set(init?.signal ?? CARD, response.status);
      return response;
    };
  }

  /** The error of a failed send: the HTTP status the remote answered with, else the connection's failure. */
  #failure(cause: unknown, status: number | undefined): RemoteExecutorError {
    const detail = cause instanceof Error ? cause.message : String(cause);
    if (status === 401 || status === 403)
      return this.#error(
        'status',
        `the remote agent refused the credentials (HTTP ${status}${status === 401 ? ', none or not valid' : ''}). ` +
          "Give a valid token in new A2AExecutor({ …, headers: { authorization: 'Bearer <token>' } }), " +
          'or a function there that returns fresh headers.',
        cause,
        status,
      );
    if (status !== undefined)
      return this.#error('status', `the remote agent answered HTTP ${status} (${detail}).`, cause, status);
    return this.#error('network', `the request failed (${detail}).`, cause);
  }

  #error(
    failure: 'status' | 'network' | 'protocol',
    message: string,
    cause?: unknown,
    status?: number,
  ): RemoteExecutorError {
    return new RemoteExecutorError(`Remote A2A participant ${JSON.stringify(this.name)} at ${this.#url}: ${message}`, {
      failure,
      url: this.#url,
      attempts: 1,
      ...(status === undefined ? {} : { status }),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}

/** The key under which a refused agent-card request is noted (the card is fetched without a signal). */
const CARD = {};

/** `inner` with `headers` (fixed, or from a function called per request) set on every request. */
function withHeaders(inner: typeof fetch, headers: A2AExecutorOptions['headers']): typeof fetch {
  if (headers === undefined) return inner;
  return async (url, init) => {
    const merged = new Headers(typeof headers === 'function' ? await headers() : headers);
    // The request's own headers (content type, A2A version) win, as in the SDK's authenticating fetch.
    for (const [name, value] of new Headers(init?.headers)) merged.set(name, value);
    return inner(url, { ...init, headers: merged });
  };
}

function stateName(state: TaskState | undefined): string {
  return state === undefined
    ? 'without a state'
    : (TaskState[state] ?? String(state)).replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}
