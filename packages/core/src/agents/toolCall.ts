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
  input: ToolCallInput,
): Promise<ToolCallOutcome> {
  const result = resultWriter(call, input.agent);
  const found = tools.get(call.name);
  if (found === undefined) {
    const names = [...tools.keys()].join(', ') || '(none)';
    return result(`Error: there is no tool named ${JSON.stringify(call.name)}. Available tools: ${names}.`, true);
  }
  const parsed = await readArguments(call, found);
  if (!parsed.ok) return result(parsed.content, true);
  const context = toolContext(call, input);
  let gate: ApprovalGate | undefined;
  try {
    // A tool that needs no approval skips the gate: no promise and no tick for it.
    gate = found.needsApproval
      ? await approvalGate(call, found, parsed.data, context, input)
      : { type: 'run', data: parsed.data };
    if (gate.type === 'request') return gate;
    if (gate.type === 'refused') return result(gate.content, true);
    // A tool that returns synchronously (a handoff, most lookups in memory) is not awaited: no tick and no promise for it.
    const returned = found.execute(gate.data, context);
    const value = isPromiseLike(returned) ? await returned : returned;
    return outcomeOf(call, input.agent, value, result, gate);
  } catch (error) {
    const approved = gate?.type === 'run' ? gate : undefined;
    return result(
      `Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`,
      true,
      undefined,
      approved,
    );
  }
}

/** What `runToolCall` reads of the executor input, plus the calling agent's name. */
type ToolCallInput = Pick<
  ExecutorInput,
  'sessionId' | 'branchId' | 'approvals' | 'approvalGrant' | 'signal' | 'state' | 'assets'
> & {
  agent: string;
};

/** What a call may run with after its approval check: the arguments, and what a human approved instead or the grant it runs under. */
interface RunGate {
  type: 'run';
  data: unknown;
  approvedArguments?: Record<string, unknown>;
  grant?: ApprovalGrant;
}

/** The approval check's verdict: run, ask a human, or refuse with the error result the model sees. */
type ApprovalGate = RunGate | { type: 'request'; request: NewRequest } | { type: 'refused'; content: string };

/** Builds the call's result, timed from now (the call's start). */
type ResultWriter = (
  content: string,
  isError: boolean,
  control?: PendingWrite['control'],
  approved?: RunGate,
) => ToolCallOutcome;

function resultWriter(call: ToolCall, agent: string): ResultWriter {
  const started = performance.now();
  return (content, isError, control, approved) => {
    const result: PendingWrite = {
      toolCallId: call.id,
      toolName: call.name,
      agent,
      content,
      isError,
      durationMs: Math.max(0, performance.now() - started),
      createdAt: isoNow(),
    };
    if (control !== undefined) result.control = control;
    if (approved?.approvedArguments !== undefined) result.approvedArguments = approved.approvedArguments;
    if (approved?.grant !== undefined) result.approvalGrant = approved.grant;
    return { type: 'write', write: result };
  };
}

/** The call's arguments parsed as JSON and checked by the tool's schema, or the error result the model sees. */
async function readArguments(
  call: ToolCall,
  tool: Tool,
): Promise<{ ok: true; data: unknown } | { ok: false; content: string }> {
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    const problem = (error as Error).message;
    return {
      ok: false,
      content: `Error: the arguments of ${call.name} are not valid JSON (${problem}). Call it again with a JSON object.`,
    };
  }
  const parsed = await parseArguments(tool, raw);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    content: parsed.threw ? `Error: ${parsed.problem}` : `Error: ${parsed.problem} Call it again with valid arguments.`,
  };
}

function toolContext(call: ToolCall, input: ToolCallInput): ToolContext {
  const context: ToolContext = {
    sessionId: input.sessionId,
    branchId: input.branchId,
    agent: input.agent,
    toolCallId: call.id,
    signal: input.signal,
    state: input.state,
  };
  if (input.assets !== undefined) context.assets = input.assets;
  return context;
}

/**
 * Whether a call runs: a decision on this very call (a rejection above all) wins over a standing
 * approval of its tool (`input.approvalGrant`); with neither, the call becomes a `tool_approval` request.
 */
async function approvalGate(
  call: ToolCall,
  tool: Tool,
  data: unknown,
  context: ToolContext,
  input: ToolCallInput,
): Promise<ApprovalGate> {
  const needsApproval =
    typeof tool.needsApproval === 'function' ? await tool.needsApproval(data, context) : tool.needsApproval;
  if (!needsApproval) return { type: 'run', data };
  const decision = input.approvals?.get(call.id);
  if (decision === undefined) {
    const grant = await input.approvalGrant?.(call.name);
    if (grant !== undefined) return { type: 'run', data, grant };
    return {
      type: 'request',
      request: {
        type: 'tool_approval',
        agent: input.agent,
        toolCallId: call.id,
        toolName: call.name,
        arguments: call.arguments,
      },
    };
  }
  if (!decision.approved)
    return {
      type: 'refused',
      content: `Error: a human rejected this call to ${call.name}${decision.reason ? `: ${decision.reason}` : '.'}`,
    };
  if (decision.arguments === undefined) return { type: 'run', data };
  // Approved with edits: the tool runs with the human's arguments (checked by the caller too); the result records them.
  const edited = await parseArguments(tool, decision.arguments);
  if (!edited.ok)
    return { type: 'refused', content: `Error: the arguments a human approved are invalid: ${edited.problem}` };
  return { type: 'run', data: edited.data, approvedArguments: decision.arguments };
}

/** What a tool's return value means: a control (user input, handoff, end of conversation) or a plain result. */
function outcomeOf(
  call: ToolCall,
  agent: string,
  value: unknown,
  result: ResultWriter,
  approved: RunGate,
): ToolCallOutcome {
  if (!isToolControl(value)) return result(serializeToolResult(value), false, undefined, approved);
  switch (value.kind) {
    case 'user_input':
      return { type: 'request', request: { type: 'user_input', agent, toolCallId: call.id, prompt: value.prompt } };
    case 'handoff': {
      const control: PendingWrite['control'] =
        value.reason === undefined
          ? { kind: 'handoff', target: value.target }
          : { kind: 'handoff', target: value.target, reason: value.reason };
      return result(`Transferred to ${value.target}.`, false, control, approved);
    }
    case 'end_conversation':
      return result('The conversation is closed.', false, { kind: 'end_conversation', reason: value.reason }, approved);
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
export async function parseArguments(
  target: Tool,
  raw: unknown,
): Promise<{ ok: true; data: unknown } | { ok: false; problem: string; threw: boolean }> {
  try {
    const parsed = await target.parameters.safeParseAsync(raw);
    if (parsed.success) return { ok: true, data: parsed.data };
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    return { ok: false, problem: `invalid arguments for ${target.name}: ${issues}.`, threw: false };
  } catch (error) {
    return {
      ok: false,
      problem: `the arguments of ${target.name} could not be validated: ${error instanceof Error ? error.message : String(error)}`,
      threw: true,
    };
  }
}

/** Whether `value` is a promise or another thenable (what `await` would wait for). */
function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
