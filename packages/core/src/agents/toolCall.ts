import { isoNow } from '../clock.js';
import type { ApprovalGrant } from '../conversation/approvalGrant.js';
import type { PendingWrite } from '../conversation/checkpoint.js';
import type { ToolCall } from '../conversation/message.js';
import type { NewRequest } from '../conversation/request.js';
import type { ExecutorInput } from '../executors/executor.js';
import { isToolControl, serializeToolResult, type Tool, type ToolContext } from './tool.js';

/** What running one tool call gives: a result to record, or a request that pauses the turn. */
export type ToolCallOutcome = { type: 'write'; write: PendingWrite } | { type: 'request'; request: NewRequest };

/**
 * Runs one tool call the model made, never throwing: an unknown tool, malformed JSON, arguments
 * that fail the tool's zod schema, a rejected approval and an exception in `execute` each become
 * an error result the model sees (docs/architecture.md invariant 5). A call that needs approval runs
 * with its own decision (`input.approvals`), else under a standing grant of its tool
 * (`input.approvalGrant`, recorded on the result), else becomes a `tool_approval` request.
 *
 * @param input the executor input, plus the calling agent's name
 * @returns a finished result (`write`), or a `user_input` / `tool_approval` request
 */
export async function runToolCall(
  call: ToolCall,
  tools: ReadonlyMap<string, Tool>,
  input: Pick<ExecutorInput, 'sessionId' | 'branchId' | 'approvals' | 'approvalGrant' | 'signal' | 'state' | 'assets'> & {
    agent: string;
  },
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
    if (approvedArguments !== undefined) result.approvedArguments = approvedArguments;
    if (grant !== undefined) result.approvalGrant = grant;
    return { type: 'write', write: result };
  };
  let approvedArguments: Record<string, unknown> | undefined;
  let grant: ApprovalGrant | undefined;

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
  let parsed = await parseArguments(found, raw);
  if (!parsed.ok) return write(parsed.threw ? `Error: ${parsed.problem}` : `Error: ${parsed.problem} Call it again with valid arguments.`, true);
  const context: ToolContext = {
    sessionId: input.sessionId,
    branchId: input.branchId,
    agent: input.agent,
    toolCallId: call.id,
    signal: input.signal,
    state: input.state,
  };
  if (input.assets !== undefined) context.assets = input.assets;
  try {
    const needsApproval = typeof found.needsApproval === 'function' ? await found.needsApproval(parsed.data, context) : found.needsApproval;
    if (needsApproval) {
      const decision = input.approvals?.get(call.id);
      // A decision on this very call (a rejection above all) wins over a standing approval of its tool.
      if (decision === undefined) grant = await input.approvalGrant?.(call.name);
      if (decision === undefined && grant === undefined) {
        return { type: 'request', request: { type: 'tool_approval', agent: input.agent, toolCallId: call.id, toolName: call.name, arguments: call.arguments } };
      }
      if (decision !== undefined && !decision.approved) {
        return write(`Error: a human rejected this call to ${call.name}${decision.reason ? `: ${decision.reason}` : '.'}`, true);
      }
      if (decision?.arguments !== undefined) {
        // Approved with edits: the tool runs with the human's arguments (checked by the caller too); the result records them.
        parsed = await parseArguments(found, decision.arguments);
        if (!parsed.ok) return write(`Error: the arguments a human approved are invalid: ${parsed.problem}`, true);
        approvedArguments = decision.arguments;
      }
    }
    // A tool that returns synchronously (a handoff, most lookups in memory) is not awaited: no tick and no promise for it.
    const returned = found.execute(parsed.data, context);
    const value = isPromiseLike(returned) ? await returned : returned;
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

/**
 * Validates tool arguments with the tool's zod schema (asynchronously, so async refinements work;
 * a refinement that throws is the tool's fault, reported as a problem).
 *
 * @returns the parsed arguments, or a sentence naming each issue by path (`threw` when the schema itself threw)
 * @example
 * ```ts
 * const checked = await parseArguments(refund, { amount: -1 });
 * if (!checked.ok) console.log(checked.problem); // 'invalid arguments for refund: amount: Too small: …'
 * ```
 */
export async function parseArguments(target: Tool, raw: unknown): Promise<{ ok: true; data: unknown } | { ok: false; problem: string; threw: boolean }> {
  try {
    const parsed = await target.parameters.safeParseAsync(raw);
    if (parsed.success) return { ok: true, data: parsed.data };
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    return { ok: false, problem: `invalid arguments for ${target.name}: ${issues}.`, threw: false };
  } catch (error) {
    return { ok: false, problem: `the arguments of ${target.name} could not be validated: ${error instanceof Error ? error.message : String(error)}`, threw: true };
  }
}

/** Whether `value` is a promise or another thenable (what `await` would wait for). */
function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
