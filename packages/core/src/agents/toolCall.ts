import type { PendingWrite } from '../conversation/checkpoint.js';
import { isoNow } from '../clock.js';
import type { ExecutorInput } from '../executors/executor.js';
import type { ToolCall } from '../conversation/message.js';
import type { NewRequest } from '../conversation/request.js';
import { isToolControl, serializeToolResult, type Tool, type ToolContext } from './tool.js';

/** What running one tool call gives: a result to record, or a request that pauses the turn. */
export type ToolCallOutcome = { type: 'write'; write: PendingWrite } | { type: 'request'; request: NewRequest };

/**
 * Runs one tool call the model made, never throwing: an unknown tool, malformed JSON, arguments
 * that fail the tool's zod schema, a rejected approval and an exception in `execute` each become
 * an error result the model sees (docs/architecture.md invariant 5).
 *
 * @param input the executor input, plus the calling agent's name
 * @returns a finished result (`write`), or a `user_input` / `tool_approval` request
 */
export async function runToolCall(
  call: ToolCall,
  tools: ReadonlyMap<string, Tool>,
  input: Pick<ExecutorInput, 'sessionId' | 'branchId' | 'approvals' | 'signal' | 'state'> & { agent: string },
): Promise<ToolCallOutcome> {
  const started = performance.now();
  const write = (content: string, isError: boolean, control?: PendingWrite['control']): ToolCallOutcome => {
    const result: PendingWrite = {
      toolCallId: call.id,
      toolName: call.name,
      agent: input.agent,
      content,
      isError,
      durationMs: Math.max(0, performance.now() - started),
      createdAt: isoNow(),
    };
    if (control !== undefined) result.control = control;
    return { type: 'write', write: result };
  };

  const found = tools.get(call.name);
  if (found === undefined) {
    const names = [...tools.keys()].join(', ') || '(none)';
    return write(`Error: there is no tool named ${JSON.stringify(call.name)}. Available tools: ${names}.`, true);
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return write(`Error: the arguments of ${call.name} are not valid JSON (${(error as Error).message}). Call it again with a JSON object.`, true);
  }
  // Async parsing, so schemas with async refinements work; a refinement that throws is the tool's fault, answered as an error.
  let parsed: Awaited<ReturnType<typeof found.parameters.safeParseAsync>>;
  try {
    parsed = await found.parameters.safeParseAsync(raw);
  } catch (error) {
    return write(`Error: the arguments of ${call.name} could not be validated: ${error instanceof Error ? error.message : String(error)}`, true);
  }
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    return write(`Error: invalid arguments for ${call.name}: ${issues}. Call it again with valid arguments.`, true);
  }
  const context: ToolContext = {
    sessionId: input.sessionId,
    branchId: input.branchId,
    agent: input.agent,
    toolCallId: call.id,
    signal: input.signal,
    state: input.state,
  };
  try {
    const needsApproval = typeof found.needsApproval === 'function' ? await found.needsApproval(parsed.data, context) : found.needsApproval;
    if (needsApproval) {
      const decision = input.approvals?.get(call.id);
      if (decision === undefined) {
        return { type: 'request', request: { type: 'tool_approval', agent: input.agent, toolCallId: call.id, toolName: call.name, arguments: call.arguments } };
      }
      if (!decision.approved) {
        return write(`Error: a human rejected this call to ${call.name}${decision.reason ? `: ${decision.reason}` : '.'}`, true);
      }
    }
    const value = await found.execute(parsed.data, context);
    if (isToolControl(value)) {
      switch (value.kind) {
        case 'user_input':
          return { type: 'request', request: { type: 'user_input', agent: input.agent, toolCallId: call.id, prompt: value.prompt } };
        case 'handoff':
          return write(
            `Transferred to ${value.target}.`,
            false,
            value.reason === undefined ? { kind: 'handoff', target: value.target } : { kind: 'handoff', target: value.target, reason: value.reason },
          );
        case 'end_conversation':
          return write('The conversation is closed.', false, { kind: 'end_conversation', reason: value.reason });
      }
    }
    return write(serializeToolResult(value), false);
  } catch (error) {
    return write(`Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`, true);
  }
}
