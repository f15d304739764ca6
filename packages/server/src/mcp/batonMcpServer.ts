import type { Request } from '@baton/core';
import type { HandoffSession, HandoffWorkflow, RequestAnswer, TurnStream } from '@baton/handoff';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Principal, tenantKeyOf } from '../http/auth.js';
import { createSession, openSession, scopeOf } from '../http/sessionAccess.js';
import { TurnRuns, type TurnRunsOptions } from '../streaming/turnRuns.js';

/** Options of {@link batonMcpServer}, {@link mcpRoutes} and {@link serveMcpStdio}. */
export interface BatonMcpOptions {
  /** The workflow the tools talk to; its store keeps the sessions (one per MCP conversation). */
  workflow: HandoffWorkflow;
  /** The name of the tool that sends a message (default: the workflow's name); the other is `<name>_respond`. */
  toolName?: string;
  /** What the tool does, for the calling model (default: the workflow's participants and their descriptions). */
  description?: string;
  /**
   * How turns hold the branch's lease and write the store's event log (as `createBatonApp`'s `events`):
   * a tool call takes the lease before any model call, so it and a REST or AG-UI turn on one branch,
   * in one process or two, do not both run; the second is a tool error (`CONCURRENCY`).
   */
  events?: TurnRunsOptions;
}

/** Where a server's conversation lives: its Baton session id (read when the first tool call comes) and whose it is. */
export interface McpConversation {
  /** The Baton session id of this MCP conversation. */
  sessionId: () => string;
  /** The caller, as the auth hook said (the session is created for its tenant and user). */
  principal: Principal;
  /** The turns of this process that hold branch leases (default: new ones over the workflow's store, from `events`). */
  runs?: TurnRuns;
}

const RequestView = z.object({
  id: z.string(),
  type: z.enum(['user_input', 'tool_approval', 'human_step']),
  agent: z.string(),
  prompt: z.string().optional(),
  toolName: z.string().optional(),
  arguments: z.string().optional(),
});

/** The structured result of both tools. */
const TurnOutput = {
  sessionId: z.string().describe('The Baton session of this MCP conversation'),
  reply: z.string().describe("The workflow's answer (empty when it is waiting on a request)"),
  agent: z.string().describe('The agent that acts next'),
  pendingRequests: z.array(RequestView).describe('What the workflow waits on: answer each with the respond tool'),
};

/**
 * An MCP server (`@modelcontextprotocol/sdk`'s `McpServer`) whose tools talk to a handoff workflow,
 * one Baton session per MCP conversation (created on the first call, for the caller's tenant and
 * user; later calls continue it):
 *
 * - `<toolName>` `{ message }`: sends the user's message (while one `user_input` request waits, the
 *   message answers it) and returns the workflow's reply;
 * - `<toolName>_respond` `{ requestId, text? | approved?, reason?, always? | reply? | handoff? }`: answers a
 *   pending request (a tool approval, a question, a human step) and returns the rest of the turn.
 *
 * Both return the reply as text and `{ sessionId, reply, agent, pendingRequests }` as structured
 * content; a turn that pauses lists what it waits on, and a Baton error (a message while an approval
 * waits, an unknown request, a closed session) is a tool error result (`isError`) naming the fix.
 *
 * @param options `{ workflow, toolName?, description? }`
 * @param conversation the conversation's Baton session id and caller
 * @returns the MCP server, to connect to one transport
 * @example
 * ```ts
 * const server = batonMcpServer({ workflow: desk }, { sessionId: () => 'mcp-1', principal: {} });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function batonMcpServer(options: BatonMcpOptions, conversation: McpConversation): McpServer {
  const { workflow } = options;
  const name = options.toolName ?? workflow.config.name;
  const server = new McpServer({ name: `baton-${workflow.config.name}`, version: '0.1.0' });
  const runs = conversation.runs ?? new TurnRuns(options.events, workflow.config.store);
  const tenantKey = tenantKeyOf(conversation.principal);
  let opened: Promise<HandoffSession> | undefined;
  const session = () => {
    opened ??= openOrCreate(workflow, conversation).catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
  const participants = [...workflow.config.participants.values()].map((p) => `${p.name}: ${p.description}`).join(', ');
  server.registerTool(
    name,
    {
      title: `Talk to ${workflow.config.name}`,
      description:
        options.description ??
        `Sends a message to the ${workflow.config.name} workflow (${participants}) and returns its reply. The conversation continues across calls.`,
      inputSchema: { message: z.string().min(1).describe("The user's message") },
      outputSchema: TurnOutput,
    },
    ({ message }) => turnResult(runs, tenantKey, session, (s) => s.send(message)),
  );
  server.registerTool(
    `${name}_respond`,
    {
      title: `Answer a request of ${workflow.config.name}`,
      description: `Answers a request the ${workflow.config.name} workflow waits on (pendingRequests of the last result): text for a user_input, approved (and reason) for a tool_approval, reply or handoff for a human_step.`,
      inputSchema: {
        requestId: z.string().describe('The id of the pending request'),
        text: z.string().optional().describe('The answer to a user_input request'),
        approved: z.boolean().optional().describe('The decision on a tool_approval request'),
        always: z
          .literal('session')
          .optional()
          .describe('With approved: true, allow the tool for the rest of the conversation'),
        reason: z.string().optional().describe('Why a tool call is rejected, or why a human step hands off'),
        reply: z.string().optional().describe("A human step's reply"),
        handoff: z.string().optional().describe('The agent a human step hands off to'),
      },
      outputSchema: TurnOutput,
    },
    (args) => turnResult(runs, tenantKey, session, (s) => s.respond(args.requestId, answerOf(args))),
  );
  return server;
}

async function openOrCreate(workflow: HandoffWorkflow, conversation: McpConversation): Promise<HandoffSession> {
  const id = conversation.sessionId();
  const exists = (await workflow.config.store.getSession(id, scopeOf(conversation.principal))) !== undefined;
  return exists
    ? openSession(workflow, conversation.principal, id)
    : createSession(workflow, conversation.principal, id, undefined);
}

/**
 * Runs a turn call under the branch's lease (taken before the call: a busy branch is a `CONCURRENCY`
 * error result, nothing run) and reports it as a tool result (a Baton error as an error result).
 */
async function turnResult(
  runs: TurnRuns,
  tenantKey: string,
  session: () => Promise<HandoffSession>,
  call: (session: HandoffSession) => TurnStream,
): Promise<CallToolResult> {
  try {
    const opened = await session();
    const headSeq = opened.messages.at(-1)?.seq ?? 0;
    const started = await runs.start(tenantKey, opened.id, opened.branchId, headSeq, () => call(opened));
    started.queue.close();
    const result = await started.stream;
    await started.ended; // the branch is free (lease released) when the caller gets the result
    const reply = result.message?.content ?? '';
    const pendingRequests = result.pendingRequests.map(requestView);
    const waiting = pendingRequests.map(
      (r) => `[${r.type} ${r.id}] ${r.prompt ?? `${r.agent} asks to call ${r.toolName} with ${r.arguments}`}`,
    );
    const text = [reply, ...(waiting.length === 0 ? [] : [`Waiting on: ${waiting.join('; ')}`])]
      .filter((t) => t !== '')
      .join('\n');
    return {
      content: [{ type: 'text', text }],
      structuredContent: { sessionId: opened.id, reply, agent: opened.activeAgent, pendingRequests },
    };
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'INTERNAL';
    const message =
      error instanceof Error && code !== 'INTERNAL' ? error.message : 'The workflow failed; see the server log.';
    if (code === 'INTERNAL') console.error('[baton/server mcp]', error);
    return { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true };
  }
}

function requestView(request: Request): z.infer<typeof RequestView> {
  const base = { id: request.id, type: request.type, agent: request.agent };
  return request.type === 'tool_approval'
    ? { ...base, toolName: request.toolName, arguments: request.arguments }
    : { ...base, prompt: request.prompt };
}

function answerOf(args: {
  text?: string | undefined;
  approved?: boolean | undefined;
  always?: 'session' | undefined;
  reason?: string | undefined;
  reply?: string | undefined;
  handoff?: string | undefined;
}): RequestAnswer {
  if (args.approved === true)
    return args.always === undefined ? { approved: true } : { approved: true, always: args.always };
  if (args.approved === false)
    return args.reason === undefined ? { approved: false } : { approved: false, reason: args.reason };
  if (args.reply !== undefined) return { reply: args.reply };
  if (args.handoff !== undefined)
    return args.reason === undefined ? { handoff: args.handoff } : { handoff: args.handoff, reason: args.reason };
  // A text answer, or none (the session names what the request takes).
  return args.text ?? '';
}
