/** One step of `AgentExecutor`: answering the tool calls of one assistant message. */
import type { Tool } from '../agents/tool.js';
import { runToolCall, type ToolCallOutcome } from '../agents/toolCall.js';
import type { PendingWrite } from '../conversation/checkpoint.js';
import type { Message, ToolCall } from '../conversation/message.js';
import { type NewRequest, requestKey } from '../conversation/request.js';
import { raceAbort } from './abort.js';
import type { EventSink } from './eventChannel.js';
import type { ExecutorInput } from './executor.js';

/** What one step of tool calls gives: the committed results, or the requests that pause the turn. */
export interface ToolCallStep {
  committed: Message[];
  requests: NewRequest[];
  control?: PendingWrite['control'];
}

/**
 * Answers every tool call of one assistant message: results already in the journal are reused,
 * the rest run concurrently; each finished result is recorded as a pending write at once. When
 * none waits for a human, all results are committed in call order. `agent` is the agent whose
 * assistant message made the calls.
 */
export async function answerToolCalls(
  agent: string,
  calls: readonly ToolCall[],
  tools: ReadonlyMap<string, Tool>,
  input: ExecutorInput,
  emit: EventSink,
): Promise<ToolCallStep> {
  const step = new RunningCalls(agent, input, emit);
  const abort = raceAbort(input.signal);
  try {
    await step.start(calls, tools);
    await step.collect(abort);
  } finally {
    abort.dispose();
    step.leave();
  }
  if (step.requests.length > 0) {
    const order = (request: NewRequest) => calls.findIndex((c) => c.id === requestKey(request));
    return { committed: [], requests: step.requests.sort((a, b) => order(a) - order(b)) };
  }
  const { ordered, control } = oneControl(calls, step.results);
  const ready = input.ready?.();
  if (ready !== undefined) await ready;
  const committed = await input.journal.commit(ordered.map(toolMessage));
  for (const message of committed)
    emit({ type: 'message', sessionId: input.sessionId, branchId: input.branchId, message });
  return control === undefined ? { committed, requests: [] } : { committed, requests: [], control };
}

type Finished = { id: string; outcome: ToolCallOutcome };

/** The tool calls of one step while they run: started, journalled as each returns, collected in finishing order. */
class RunningCalls {
  readonly results = new Map<string, PendingWrite>();
  readonly requests: NewRequest[] = [];
  readonly #running = new Map<string, Promise<Finished>>();
  /** Set when this step is left (cancelled, failed, or the caller stopped reading): late results are not journalled. */
  #left = false;
  readonly #callInput: Parameters<typeof runToolCall>[2];

  constructor(
    readonly agent: string,
    readonly input: ExecutorInput,
    readonly emit: EventSink,
  ) {
    // What runToolCall reads, built once (`{ ...input, agent }` is a slow spread in V8).
    const callInput: Parameters<typeof runToolCall>[2] = {
      sessionId: input.sessionId,
      branchId: input.branchId,
      signal: input.signal,
      state: input.state,
      agent,
    };
    if (input.approvals !== undefined) callInput.approvals = input.approvals;
    if (input.approvalGrant !== undefined) callInput.approvalGrant = input.approvalGrant;
    if (input.assets !== undefined) callInput.assets = input.assets;
    this.#callInput = callInput;
  }

  /** Starts every call whose result the journal does not hold yet, announcing each with `tool.call`. */
  async start(calls: readonly ToolCall[], tools: ReadonlyMap<string, Tool>): Promise<void> {
    const { input, emit, agent } = this;
    for (const call of calls) {
      const done = input.journal.pendingWrites.get(call.id);
      if (done !== undefined) {
        this.results.set(call.id, done);
        continue;
      }
      emit({ type: 'tool.call', sessionId: input.sessionId, branchId: input.branchId, agent, toolCall: call });
      const ready = input.ready?.();
      if (ready !== undefined) await ready;
      // Each result is journalled as soon as its tool returns, not behind its siblings: a crash
      // re-runs only tools whose result was not journalled yet (at-least-once before `tool.result`,
      // exactly-once after it).
      const started =
        input.within === undefined
          ? runToolCall(call, tools, this.#callInput)
          : input.within(() => runToolCall(call, tools, this.#callInput));
      const id = call.id;
      // Not an async callback: a result that needs no journal write (a request) settles without an await.
      this.#running.set(
        id,
        started.then((outcome) =>
          outcome.type === 'write' && !this.#left
            ? input.journal.recordPendingWrite(outcome.write).then(() => ({ id, outcome }))
            : { id, outcome },
        ),
      );
    }
  }

  /** Waits for the running calls in finishing order, raced with the signal so a tool that ignores it cannot hold a cancelled turn. */
  async collect(abort: ReturnType<typeof raceAbort>): Promise<void> {
    const running = this.#running;
    const { input, emit, agent } = this;
    while (running.size > 0) {
      const { id, outcome } = await abort.race(
        running.size === 1 ? running.values().next().value! : Promise.race(running.values()),
      );
      running.delete(id);
      if (outcome.type === 'request') {
        this.requests.push(outcome.request);
        continue;
      }
      const { write } = outcome;
      this.results.set(id, write);
      emit({
        type: 'tool.result',
        sessionId: input.sessionId,
        branchId: input.branchId,
        agent,
        toolCallId: id,
        toolName: write.toolName,
        content: write.content,
        isError: write.isError,
        durationMs: write.durationMs,
      });
      if (running.size > 0) {
        // A caller that stops reading here leaves the step: later results are not journalled.
        const ready = input.ready?.();
        if (ready !== undefined) await ready;
      }
    }
  }

  /** Leaves the step: calls still running are not journalled when they return, and their failures are not unhandled. */
  leave(): void {
    if (this.#running.size === 0) return;
    this.#left = true;
    for (const pending of this.#running.values()) pending.catch(() => undefined);
  }
}

/** The results in call order with one control per step: the first in call order wins; a later handoff is answered with an error. */
function oneControl(
  calls: readonly ToolCall[],
  results: ReadonlyMap<string, PendingWrite>,
): { ordered: PendingWrite[]; control?: PendingWrite['control'] } {
  let control: PendingWrite['control'];
  const ordered = calls.map((call) => {
    const write = results.get(call.id)!;
    if (write.control === undefined) return write;
    if (control === undefined) {
      control = write.control;
      return write;
    }
    const moved = `${control.kind}${control.target ? ` to ${control.target}` : ''}`;
    return {
      ...write,
      control: undefined,
      isError: true,
      content: `Ignored: this response already moved control (${moved}). Make one handoff at a time.`,
    };
  });
  return control === undefined ? { ordered } : { ordered, control };
}

/** The tool message a result is committed as. The model's call stays on the assistant message; what a human approved instead is kept beside the result. */
function toolMessage(write: PendingWrite) {
  return {
    role: 'tool' as const,
    agent: write.agent,
    content: write.content,
    toolCallId: write.toolCallId,
    toolName: write.toolName,
    isError: write.isError,
    durationMs: write.durationMs,
    createdAt: write.createdAt,
    ...approvalMetadata(write),
  };
}

/** What a tool result keeps of its approval: the arguments a human approved instead, the grant it ran under. */
function approvalMetadata(write: PendingWrite): { metadata?: Record<string, unknown> } {
  if (write.approvedArguments === undefined && write.approvalGrant === undefined) return {};
  const metadata: Record<string, unknown> = {};
  if (write.approvedArguments !== undefined) metadata.approvedArguments = write.approvedArguments;
  if (write.approvalGrant !== undefined) metadata.approvalGrant = write.approvalGrant;
  return { metadata };
}
