import type { Message as A2AMessage, Artifact, ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { Role, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { ConcurrencyError, type Message, type Session, type Store } from '@baton/core';
import { textPart } from './a2aMessages.js';
import { type A2APrincipal, isOwnedBy, principalOf, scopeOf } from './a2aPrincipal.js';
import {
  type PendingRequestSummary,
  requestMessage,
  storedForm,
  type TaskInput,
  type TaskNote,
  taskHistory,
} from './taskHistory.js';

export type { PendingRequestSummary, TaskInput } from './taskHistory.js';
export { requestMessage } from './taskHistory.js';

/** The `metadata.baton` an A2A task of a served workflow carries (the executor sets it; the store keeps it). */
export interface BatonTaskMetadata {
  /** The Baton session of the task's context (`''` for a task refused before it had one: an unusable `contextId`). */
  sessionId: string;
  /** The first message of the session that belongs to this task. */
  fromSeq: number;
  /** The Baton request the task waits on (`input-required`), or waited on when it was cancelled. */
  request?: PendingRequestSummary;
  /** The message that answered the task (its `reply` artifact), once it has one. */
  replySeq?: number;
  /** The A2A message being handled (the executor's task event of each message); the store records it once. */
  input?: TaskInput;
}

/** One task's record in the thread store: pointers into the session, never a copy of its messages. */
interface TaskRecord {
  contextId: string;
  sessionId: string;
  fromSeq: number;
  state: TaskState;
  timestamp: string;
  request?: PendingRequestSummary;
  replySeq?: number;
  /** The client's messages in this task, as sent (answers to `input-required` included). */
  inputs?: TaskInput[];
  /** The last status message, when it is no session message (refused, cancelled, closed without a reply). */
  note?: TaskNote;
  /** Who created the task (absent: a task of an unauthenticated caller, or one recorded before owners were). */
  owner?: A2APrincipal;
}

/** The index document, kept in the metadata of one Baton session per served workflow. */
interface ThreadIndex {
  /** contextId → Baton session id. */
  contexts: Record<string, string>;
  /** contextId → who started it (absent: an unauthenticated caller's, or one recorded before owners were). */
  owners?: Record<string, A2APrincipal>;
  tasks: Record<string, TaskRecord>;
}

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** What `new A2AThreadStore(…)` takes. */
export interface A2AThreadStoreOptions {
  /** The Baton store (the workflow's). */
  store: Store;
  /** The served workflow's name: the A2A agent id, which names the index. */
  agentId: string;
  /** Finished tasks kept in the index, the oldest dropped first (default 1,000). Their messages stay in the session. */
  keepFinishedTasks?: number;
}

/**
 * The A2A `TaskStore` of a served workflow, kept in the Baton store so tasks survive a restart: the
 * thread store that maps an A2A `contextId` to its Baton session (for the agent id, the workflow),
 * and each task id to its context, state and the first message of the session that is the task's.
 * The index lives in the `metadata` of one Baton session, `a2a-threads:<agentId>`, changed by
 * compare-and-set. A task read back is rebuilt from the session's assistant messages and the
 * record (see {@link A2AThreadStore.load}): the record keeps the client's messages as sent (an
 * answer to `input-required` is a tool result in the session, not a user message), the request
 * the task waits on, and a final status message the session does not hold (a refusal, a
 * cancellation, a closing note); the agents' messages are never copied.
 *
 * @example
 * ```ts
 * import { A2AThreadStore } from '@baton/a2a';
 * const tasks = new A2AThreadStore({ store: desk.config.store, agentId: desk.name });
 * await tasks.sessionOf('6f0c…'); // 'support-desk:6f0c…' once a task ran in that context
 * ```
 */
export class A2AThreadStore implements TaskStore {
  readonly #store: Store;
  readonly #indexId: string;
  readonly #keep: number;

  constructor(options: A2AThreadStoreOptions) {
    this.#store = options.store;
    this.#indexId = `a2a-threads:${options.agentId}`;
    this.#keep = options.keepFinishedTasks ?? 1000;
  }

  /** The Baton session id of an A2A context, if a task ran in it. */
  async sessionOf(contextId: string): Promise<string | undefined> {
    return (await this.#read()).index.contexts[contextId];
  }

  /**
   * Whether `principal` may use the context: one no task ran in yet, or one its tenant and user
   * started (see `isOwnedBy`). Another user's or tenant's context is, for the caller, one that
   * does not exist.
   */
  async mayUseContext(contextId: string, principal: A2APrincipal): Promise<boolean> {
    const { index } = await this.#read();
    if (index.contexts[contextId] === undefined && index.owners?.[contextId] === undefined) return true;
    return isOwnedBy(index.owners?.[contextId] ?? {}, principal);
  }

  /** Who created a task (`{}` for an unauthenticated caller's), or `undefined` for an unknown id. */
  async ownerOf(taskId: string): Promise<A2APrincipal | undefined> {
    const record = (await this.#read()).index.tasks[taskId];
    return record === undefined ? undefined : (record.owner ?? {});
  }

  /** The tasks of a context, oldest first: id, state and the request an `input-required` one waits on. */
  async tasksOf(contextId: string): Promise<Array<{ id: string; state: TaskState; request?: PendingRequestSummary }>> {
    const { index } = await this.#read();
    return Object.entries(index.tasks)
      .filter(([, r]) => r.contextId === contextId)
      .sort(([, a], [, b]) => a.fromSeq - b.fromSeq)
      .map(([id, r]) =>
        r.request === undefined ? { id, state: r.state } : { id, state: r.state, request: r.request },
      );
  }

  /** Saves the task's state and pointers (its `metadata.baton`); its messages are the session's. */
  async save(task: Task, context?: ServerCallContext): Promise<void> {
    const baton = task.metadata?.baton as BatonTaskMetadata | undefined;
    const caller = principalOf(context);
    await this.#change((index) => {
      const before = index.tasks[task.id];
      const sessionId = baton?.sessionId ?? before?.sessionId;
      if (sessionId === undefined) return false;
      const state = task.status?.state ?? before?.state ?? TaskState.TASK_STATE_SUBMITTED;
      const record: TaskRecord = {
        contextId: task.contextId,
        sessionId,
        fromSeq: baton?.fromSeq ?? before?.fromSeq ?? 1,
        state,
        timestamp: task.status?.timestamp ?? before?.timestamp ?? new Date().toISOString(),
      };
      // A cancelled task keeps the request it waited on, so the next task of its context can drop that turn.
      const keepsRequest = state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_CANCELED;
      const request = keepsRequest ? (baton?.request ?? before?.request) : undefined;
      if (request !== undefined) record.request = request;
      const replySeq = baton?.replySeq ?? before?.replySeq;
      if (replySeq !== undefined) record.replySeq = replySeq;
      const inputs = [...(before?.inputs ?? [])];
      const input = baton?.input;
      if (input !== undefined && !inputs.some((i) => i.messageId === input.messageId)) inputs.push(input);
      if (inputs.length > 0) record.inputs = inputs;
      const note = noteOf(task.status?.message, state, replySeq, before?.note);
      if (note !== undefined) record.note = note;
      // The task is its creator's for good (a save without a caller, e.g. a cancellation, keeps it).
      const owner = before === undefined ? ownerRecord(caller) : before.owner;
      if (owner !== undefined) record.owner = owner;
      if (before !== undefined && JSON.stringify(before) === JSON.stringify(record)) return false;
      index.tasks[task.id] = record;
      if (sessionId !== '' && index.contexts[task.contextId] === undefined && owner !== undefined)
        index.owners = { ...index.owners, [task.contextId]: owner };
      if (sessionId !== '') index.contexts[task.contextId] = sessionId;
      this.#prune(index);
      return true;
    });
  }

  /**
   * The task rebuilt from its record and its session's messages, or `undefined` for an unknown id.
   *
   * `history` is what the SDK's own `ResultManager` keeps for the same conversation (so `GetTask`
   * agrees before and after a restart): every message the client sent in the task, as sent (the
   * answers to `input-required` too, which the session holds as tool results), then, in order,
   * each assistant message with text once (`messageId` = the Baton message id), and each
   * `input-required` prompt before the answer to it. As the SDK appends a status update's message
   * to `history` unless a message with its `messageId` is there, `status.message` is the last entry
   * of `history` (the same message, not a second one): the reply of a `completed` task, the prompt
   * of an `input-required` one, or the note of a refused, cancelled or reply-less one. The A2A 1.0
   * specification (§4.1.1 Task `history`, §4.1.2 TaskStatus `message`) leaves that choice to the
   * agent (a2aproject/A2A#1252); this follows the SDK.
   *
   * With a `context` (every call of the SDK), a task of another user or tenant than the caller's
   * (`ServerCallContext.user`, see `principalOf`) is `undefined`: the SDK answers `TaskNotFound`.
   */
  async load(taskId: string, context?: ServerCallContext): Promise<Task | undefined> {
    const { index } = await this.#read();
    const record = index.tasks[taskId];
    if (record === undefined) return undefined;
    if (context !== undefined && !isOwnedBy(record.owner ?? {}, principalOf(context))) return undefined;
    // A rejected task ran no turn: it neither owns session messages nor ends another task's part.
    const rejected = record.state === TaskState.TASK_STATE_REJECTED;
    const next = Object.values(index.tasks)
      .filter(
        (other) =>
          other.sessionId === record.sessionId &&
          other.fromSeq > record.fromSeq &&
          other.state !== TaskState.TASK_STATE_REJECTED,
      )
      .reduce((min, other) => Math.min(min, other.fromSeq), Number.POSITIVE_INFINITY);
    let messages: Message[] = [];
    try {
      if (!rejected) {
        messages = await this.#store.readMessages(record.sessionId, 'main', {
          ...scopeOf(record.owner ?? {}),
          fromSeq: record.fromSeq,
          ...(Number.isFinite(next) ? { throughSeq: next - 1 } : {}),
        });
      }
    } catch {
      // The session was deleted (erased user, idle sweep): the task keeps its state, without history.
    }
    const waitingOn = record.state === TaskState.TASK_STATE_INPUT_REQUIRED ? record.request : undefined;
    const history = taskHistory({
      taskId,
      contextId: record.contextId,
      messages,
      inputs: record.inputs ?? [],
      ...(waitingOn === undefined ? {} : { waitingOn }),
      ...(record.note === undefined ? {} : { note: record.note }),
    });
    const reply = record.replySeq === undefined ? undefined : messages.find((m) => m.seq === record.replySeq);
    let statusMessage: A2AMessage | undefined;
    if (waitingOn !== undefined) {
      // The prompt, or the last time it was asked again after a message that was no answer.
      const asked = requestMessage(waitingOn, { ...record, taskId }).messageId;
      statusMessage = history.findLast((m) => m.messageId.startsWith(asked));
    } else if (record.note !== undefined) statusMessage = history.find((m) => m.messageId === record.note?.messageId);
    else if (reply !== undefined) statusMessage = history.find((m) => m.messageId === reply.id);
    else if (record.state === TaskState.TASK_STATE_COMPLETED)
      statusMessage = history.findLast((m) => m.role === Role.ROLE_AGENT);
    const metadata: BatonTaskMetadata = { sessionId: record.sessionId, fromSeq: record.fromSeq };
    if (record.request !== undefined) metadata.request = record.request;
    if (record.replySeq !== undefined) metadata.replySeq = record.replySeq;
    // The `reply` artifact is the answer's message, pointed at by seq (as the executor published it).
    const artifacts = reply === undefined ? [] : [replyArtifact(taskId, reply.content)];
    return {
      id: taskId,
      contextId: record.contextId,
      status: { state: record.state, message: statusMessage, timestamp: record.timestamp },
      artifacts,
      history,
      metadata: { baton: metadata },
    };
  }

  /** The caller's tasks of the index, newest first, filtered by `contextId` and `status` when given. */
  async list(params: ListTasksRequest, context?: ServerCallContext): Promise<ListTasksResponse> {
    const { index } = await this.#read();
    const caller = principalOf(context);
    const ids = Object.entries(index.tasks)
      .filter(
        ([, r]) =>
          isOwnedBy(r.owner ?? {}, caller) &&
          (params.contextId === '' || r.contextId === params.contextId) &&
          (!params.status || r.state === params.status),
      )
      .sort(([, a], [, b]) => b.timestamp.localeCompare(a.timestamp))
      .map(([id]) => id);
    const pageSize = params.pageSize ?? 50;
    const start = params.pageToken === '' ? 0 : Number(params.pageToken);
    const page = ids.slice(start, start + pageSize);
    const tasks = (await Promise.all(page.map((id) => this.load(id, context)))).filter(
      (t): t is Task => t !== undefined,
    );
    return {
      tasks,
      nextPageToken: start + pageSize < ids.length ? String(start + pageSize) : '',
      pageSize,
      totalSize: ids.length,
    };
  }

  /** Drops the oldest finished tasks past `keepFinishedTasks`. */
  #prune(index: ThreadIndex): void {
    const finished = Object.entries(index.tasks).filter(([, r]) => TERMINAL.has(r.state));
    if (finished.length <= this.#keep) return;
    finished.sort(([, a], [, b]) => a.timestamp.localeCompare(b.timestamp));
    for (const [id] of finished.slice(0, finished.length - this.#keep)) delete index.tasks[id];
  }

  async #read(): Promise<{ session: Session | undefined; index: ThreadIndex }> {
    const session = await this.#store.getSession(this.#indexId);
    const stored = session?.metadata.a2a as ThreadIndex | undefined;
    return { session, index: structuredClone(stored ?? { contexts: {}, tasks: {} }) };
  }

  /** Applies `change` to the index by compare-and-set, reading again after a concurrent write. */
  async #change(change: (index: ThreadIndex) => boolean): Promise<void> {
    for (;;) {
      const { session, index } = await this.#read();
      if (!change(index)) return;
      try {
        if (session === undefined) {
          await this.#store.createSession({ id: this.#indexId, metadata: { a2a: index } });
        } else {
          await this.#store.updateSession(
            this.#indexId,
            { metadata: { ...session.metadata, a2a: index }, lastActivityAt: new Date().toISOString() },
            { expectedVersion: session.version },
          );
        }
        return;
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
      }
    }
  }
}

/** The `reply` artifact of a task: the turn's answer as one text part. */
export function replyArtifact(taskId: string, text: string): Artifact {
  return {
    artifactId: `${taskId}:reply`,
    name: 'reply',
    description: 'The answer of the turn.',
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
  };
}

/** The owner a task records: none for a caller without tenant and user (as tasks were before owners). */
function ownerRecord(caller: A2APrincipal): A2APrincipal | undefined {
  return caller.tenantId === undefined && caller.userId === undefined ? undefined : { ...caller };
}

/** States whose last status message the session does not hold (a completed one without a reply too). */
const NOTED = new Set([TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

/** The note a task in `state` keeps: its status message when no session message is its answer. */
function noteOf(
  message: A2AMessage | undefined,
  state: TaskState,
  replySeq: number | undefined,
  before: TaskNote | undefined,
): TaskNote | undefined {
  const noted = NOTED.has(state) || (state === TaskState.TASK_STATE_COMPLETED && replySeq === undefined);
  if (!noted) return undefined;
  return message === undefined ? before : storedForm(message);
}
