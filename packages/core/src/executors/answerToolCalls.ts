/** One step of `AgentExecutor`: answering the tool calls of one assistant message. */
import type { Tool } from '../agents/tool.js';
import { runToolCall } from '../agents/toolCall.js';
import type { PendingWrite } from '../conversation/checkpoint.js';
import type { Message, ToolCall } from '../conversation/message.js';
import { type NewRequest, requestKey } from '../conversation/request.js';
import { raceAbort } from './abort.js';
import type { EventSink } from './eventChannel.js';
import type { ExecutorInput } from './executor.js';

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
): Promise<{ committed: Message[]; requests: NewRequest[]; control?: PendingWrite['control'] }> {
  const results = new Map<string, PendingWrite>();
  const requests: NewRequest[] = [];
  const running = new Map<string, Promise<{ id: string; outcome: Awaited<ReturnType<typeof runToolCall>> }>>();
  const base = { sessionId: input.sessionId, branchId: input.branchId };
  // What runToolCall reads, built once (`{ ...input, agent }` is a slow spread in V8).
  const callInput: Parameters<typeof runToolCall>[2] = { sessionId: input.sessionId, branchId: input.branchId, signal: input.signal, state: input.state, agent };
  if (input.approvals !== undefined) callInput.approvals = input.approvals;
  if (input.approvalGrant !== undefined) callInput.approvalGrant = input.approvalGrant;
  if (input.assets !== undefined) callInput.assets = input.assets;

  /** Set when this step is left (cancelled, failed, or the caller stopped reading): late results are not journalled. */
  let left = false;
  const { within } = input;
  const abort = raceAbort(input.signal);
  try {
    for (const call of calls) {
      const done = input.journal.pendingWrites.get(call.id);
      if (done !== undefined) {
        results.set(call.id, done);
        continue;
      }
      emit({ type: 'tool.call', sessionId: base.sessionId, branchId: base.branchId, agent: agent, toolCall: call });
      const ready = input.ready?.();
      if (ready !== undefined) await ready;
      // Each result is journalled as soon as its tool returns, not behind its siblings: a crash
      // re-runs only tools whose result was not journalled yet (at-least-once before `tool.result`,
      // exactly-once after it).
      const started = within === undefined ? runToolCall(call, tools, callInput) : within(() => runToolCall(call, tools, callInput));
      const id = call.id;
      running.set(
        id,
        // Not an async callback: a result that needs no journal write (a request) settles without an await.
        started.then((outcome) =>
          outcome.type === 'write' && !left ? input.journal.recordPendingWrite(outcome.write).then(() => ({ id, outcome })) : { id, outcome },
        ),
      );
    }
    // Raced with the signal, so a tool that ignores it cannot hold a cancelled turn (its result is discarded).
    while (running.size > 0) {
      const { id, outcome } = await abort.race(running.size === 1 ? running.values().next().value! : Promise.race(running.values()));
      running.delete(id);
      if (outcome.type === 'request') {
        requests.push(outcome.request);
        continue;
      }
      results.set(id, outcome.write);
      emit({
        type: 'tool.result',
        sessionId: base.sessionId,
        branchId: base.branchId,
        agent: agent,
        toolCallId: id,
        toolName: outcome.write.toolName,
        content: outcome.write.content,
        isError: outcome.write.isError,
        durationMs: outcome.write.durationMs,
      });
      if (running.size > 0) {
        // A caller that stops reading here leaves the step: later results are not journalled.
        const ready = input.ready?.();
        if (ready !== undefined) await ready;
      }
    }
  } finally {
    abort.dispose();
    if (running.size > 0) {
      left = true;
      for (const pending of running.values()) pending.catch(() => undefined);
    }
  }
  if (requests.length > 0) {
    requests.sort((a, b) => calls.findIndex((c) => c.id === requestKey(a)) - calls.findIndex((c) => c.id === requestKey(b)));
    return { committed: [], requests };
  }

  // One control per step: the first in call order wins; a later handoff is answered with an error.
  let control: PendingWrite['control'];
  const ordered = calls.map((call) => {
    const write = results.get(call.id)!;
    if (write.control === undefined) return write;
    if (control === undefined) {
      control = write.control;
      return write;
    }
    return { ...write, control: undefined, isError: true, content: `Ignored: this response already moved control (${control.kind}${control.target ? ` to ${control.target}` : ''}). Make one handoff at a time.` };
  });
  const ready = input.ready?.();
  if (ready !== undefined) await ready;
  const committed = await input.journal.commit(
    ordered.map((write) => ({
      role: 'tool' as const,
      agent: write.agent,
      content: write.content,
      toolCallId: write.toolCallId,
      toolName: write.toolName,
      isError: write.isError,
      durationMs: write.durationMs,
      createdAt: write.createdAt,
      // The model's call stays on the assistant message; what a human approved instead is kept beside the result.
      ...approvalMetadata(write),
    })),
  );
  for (const message of committed) emit({ type: 'message', sessionId: base.sessionId, branchId: base.branchId, message });
  return control === undefined ? { committed, requests: [] } : { committed, requests: [], control };
}

/** What a tool result keeps of its approval: the arguments a human approved instead, the grant it ran under. */
function approvalMetadata(write: PendingWrite): { metadata?: Record<string, unknown> } {
  if (write.approvedArguments === undefined && write.approvalGrant === undefined) return {};
  const metadata: Record<string, unknown> = {};
  if (write.approvedArguments !== undefined) metadata.approvedArguments = write.approvedArguments;
  if (write.approvalGrant !== undefined) metadata.approvalGrant = write.approvalGrant;
  return { metadata };
}
