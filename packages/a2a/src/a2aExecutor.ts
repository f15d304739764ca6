import { randomUUID } from 'node:crypto';
import { type Message as A2AMessage, Role, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import {
  AbortedError,
  type BatonEvent,
  createId,
  type Executor,
  type ExecutorInput,
  type ExecutorOutcome,
  emptyUsage,
  type Message,
  RemoteExecutorError,
  type ToolCall,
} from '@baton/core';
import { textOf, userMessage } from './a2aMessages.js';

/** The built-in tool name a paused remote task is recorded under (`@baton/handoff`'s `request_user_input`). */
const REQUEST_USER_INPUT = 'request_user_input';

/** What `new A2AExecutor(…)` takes. */
export interface A2AExecutorOptions {
  /** The participant's name (used in `handoff_to_<name>`). */
  name: string;
  /** What other agents see when they may hand off to it (the remote card's description is not fetched for it). */
  description: string;
  /** The remote agent's base URL (its card is read from `<url>/.well-known/agent-card.json`). */
  url: string;
  /** A client of the SDK to use instead of one built from `url` (custom transports, interceptors, auth). */
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
 * participant's reply; `input-required` pauses the Baton turn with a `user_input` request (stored
 * as this participant's `request_user_input` call, the remote prompt as its prompt) whose answer
 * is sent to the same remote task. The remote context and waiting task id live in branch state
 * (`a2a:<name>`, see {@link A2AThreadState}), so checkpoints carry them and a restart of either
 * side resumes the remote task. A remote failure (`failed`, `rejected`, `canceled`, an HTTP or
 * protocol error) is a `RemoteExecutorError` naming the URL and the remote's message.
 *
 * @example
 * ```ts
 * import { A2AExecutor } from '@baton/a2a';
 * const url = 'http://127.0.0.1:4001';
 * const billing = new A2AExecutor({ name: 'billing', description: 'Refunds and invoices.', url });
 * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).build();
 * ```
 */
export class A2AExecutor implements Executor {
  readonly name: string;
  readonly description: string;
  readonly #url: string;
  #client: Promise<Client> | undefined;

  constructor(options: A2AExecutorOptions) {
    this.name = options.name;
    this.description = options.description;
    this.#url = options.url;
    if (options.client !== undefined) this.#client = Promise.resolve(options.client);
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const base = { sessionId: input.sessionId, branchId: input.branchId };
    const key = `a2a:${this.name}`;
    const thread = (input.state.branch[key] as A2AThreadState | undefined) ?? { contextId: randomUUID() };
    let text: string;
    let taskId: string | undefined;
    const open = this.#openCall(input.history);
    if (open !== undefined) {
      // The user answered the remote agent's question: commit the answer, then send it to the waiting task.
      const write = input.journal.pendingWrites.get(open.id);
      if (write === undefined)
        throw this.#error('protocol', `the request ${open.id} of ${this.name} was resumed without an answer.`);
      const [result] = await input.journal.commit([
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
      if (result !== undefined) yield { type: 'message', ...base, message: result };
      text = write.content;
      taskId = thread.taskId;
    } else {
      text = input.history.findLast((m) => m.role === 'user')?.content ?? '';
    }
    const message = userMessage(
      text,
      taskId === undefined ? { contextId: thread.contextId } : { contextId: thread.contextId, taskId },
    );
    let result: Task | A2AMessage;
    try {
      const client = await this.#connect();
      result = await client.sendMessage(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        { signal: input.signal },
      );
    } catch (cause) {
      if (input.signal.aborted) throw new AbortedError('The turn was cancelled.', { cause: input.signal.reason });
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw this.#error('network', `the request failed (${detail}).`, cause);
    }
    const usage = { ...emptyUsage(), requests: 1 };
    if (!('status' in result))
      return yield* this.#reply(input, textOf(result.parts), usage, key, { contextId: thread.contextId });
    const state = result.status?.state;
    const said = textOf(result.status?.message?.parts);
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) {
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
    this.#client ??= new ClientFactory().createFromUrl(this.#url).catch((error: unknown) => {
      this.#client = undefined; // try again at the next activation
      throw error;
    });
    return this.#client;
  }

  #error(failure: 'status' | 'network' | 'protocol', message: string, cause?: unknown): RemoteExecutorError {
    return new RemoteExecutorError(`Remote A2A participant ${JSON.stringify(this.name)} at ${this.#url}: ${message}`, {
      failure,
      url: this.#url,
      attempts: 1,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}

function stateName(state: TaskState | undefined): string {
  return state === undefined
    ? 'without a state'
    : (TaskState[state] ?? String(state)).replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}
