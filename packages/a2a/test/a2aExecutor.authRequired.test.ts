import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_PROTOCOL_VERSION, type AgentCard, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2AAuthRequiredError, A2AExecutor, agentMessage, textOf, textPart } from '@baton/a2a';
import { type BatonEvent, InMemoryStore, RemoteExecutorError } from '@baton/core';
import type { HandoffSession } from '@baton/handoff';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { refundDesk } from './support/refundDesk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SIGN_IN = 'Sign in at https://billing.example/authorize so I can read your invoices.';

/**
 * A remote billing agent built with the SDK alone: until `authorized`, a task ends in `auth-required`
 * (it needs the client to authorize it out of band); then it completes. It records what it was sent.
 */
class BillingNeedsSignIn implements AgentExecutor {
  authorized = false;
  readonly received: Array<{ text: string; contextId: string; taskId: string; known: boolean }> = [];

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    this.received.push({
      text: textOf(context.userMessage.parts),
      contextId,
      taskId,
      known: context.task !== undefined,
    });
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [],
        metadata: {},
      }),
    );
    const [state, text] = this.authorized
      ? [TaskState.TASK_STATE_COMPLETED, 'Refunded 40 EUR.']
      : [TaskState.TASK_STATE_AUTH_REQUIRED, SIGN_IN];
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state,
          message: agentMessage([textPart(text)], { contextId, taskId }),
          timestamp: new Date().toISOString(),
        },
        metadata: {},
      }),
    );
    bus.finished();
  };

  cancelTask = async (): Promise<void> => {};
}

/** Serves `executor` with the SDK's JSON-RPC handler on 127.0.0.1. */
async function serveRemote(executor: AgentExecutor): Promise<string> {
  const server: Server = (await import('node:http')).createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: 'billing-remote',
    description: 'Refunds (needs a sign-in).',
    supportedInterfaces: [
      { url: `${url}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', (request, response) => {
    response.setHeader('connection', 'close');
    app(request, response);
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return url;
}

/** Drains a turn; returns the assistant replies with text, or the error it failed with. */
async function drain(turn: AsyncIterable<BatonEvent>): Promise<string[] | unknown> {
  const replies: string[] = [];
  try {
    for await (const event of turn) {
      if (event.type === 'message' && event.message.role === 'assistant' && event.message.content !== '')
        replies.push(event.message.content);
    }
  } catch (error) {
    return error;
  }
  return replies;
}

describe('A2AExecutor: a remote task in auth-required', () => {
  it('fails the turn with A2AAuthRequiredError naming the task, asks nothing; resumes once authorized', async () => {
    const remote = new BillingNeedsSignIn();
    const url = await serveRemote(remote);
    const store = new InMemoryStore();
    const billing = new A2AExecutor({ name: 'billing', description: 'Refunds (remote).', url });
    const desk = refundDesk(store, billing);
    let session: HandoffSession = await desk.session({ id: 'chat-auth' });

    const error = await drain(session.send('I was charged twice for order 1234'));
    expect(error).toBeInstanceOf(A2AAuthRequiredError);
    expect(error).toBeInstanceOf(RemoteExecutorError);
    const [asked] = remote.received;
    expect(error).toMatchObject({
      code: 'REMOTE_EXECUTOR',
      failure: 'status',
      url,
      taskId: asked!.taskId,
      contextId: asked!.contextId,
    });
    const message = (error as Error).message;
    for (const part of ['"billing"', asked!.taskId, 'auth-required', SIGN_IN, 'headers', 'session.resume()'])
      expect(message).toContain(part);
    // The user was not asked anything: no request, no request_user_input call stored.
    expect(session.pendingRequests).toEqual([]);
    const stored = await store.readMessages('chat-auth', 'main');
    expect(stored.flatMap((m) => m.toolCalls ?? []).map((c) => c.name)).not.toContain('request_user_input');
    // The remote task is still there, in auth-required, for the client to follow.
    const client = await new ClientFactory().createFromUrl(url);
    expect((await client.getTask({ tenant: '', id: asked!.taskId })).status?.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );

    // Authorized out of band: resuming the turn sends the user's message again, as a new task.
    remote.authorized = true;
    session = await desk.session({ id: 'chat-auth' });
    expect(await drain(session.resume())).toEqual(['Refunded 40 EUR.']);
    expect(remote.received).toHaveLength(2);
    expect(remote.received[1]).toMatchObject({ text: 'I was charged twice for order 1234', known: false });
    expect(remote.received[1]!.taskId).not.toBe(asked!.taskId);
  }, 60_000);
});
