import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AbortedError, RemoteExecutor, RemoteExecutorError, type RemoteStepRequest } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { runExecutor, TestJournal } from './support/testJournal.js';

/** A real HTTP server on 127.0.0.1 that answers each POST with `handle`; it records each request body. */
async function remoteService(handle: (body: RemoteStepRequest, response: ServerResponse, attempt: number) => void) {
  const bodies: RemoteStepRequest[] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(text) as RemoteStepRequest;
      bodies.push(body);
      handle(body, response, bodies.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { url: `http://127.0.0.1:${port}/step`, bodies };
}

const servers: Server[] = [];

function ndjson(response: ServerResponse, lines: readonly string[]): void {
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  for (const line of lines) response.write(`${line}\n`);
  response.end();
}

async function userSays(text: string): Promise<TestJournal> {
  const journal = new TestJournal();
  await journal.commit([{ role: 'user', content: text }]);
  return journal;
}

const executor = (url: string, options: { timeoutMs?: number; retries?: number } = {}) =>
  new RemoteExecutor({ name: 'shipping', description: 'Parcels.', url, minRetryDelayMs: 10, ...options });

describe('RemoteExecutor against a real HTTP server on 127.0.0.1', () => {
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('POSTs the history as model messages and streams the JSON Lines answer: deltas, usage, then a committed reply', async () => {
    const service = await remoteService((_body, response) =>
      ndjson(response, [
        '{"type":"delta","text":"Your parcel "}',
        '',
        '{"type":"delta","text":"ships today."}',
        '{"type":"usage","inputTokens":12,"outputTokens":4}',
        '{"type":"reply","text":"Your parcel ships today."}',
      ]),
    );
    const journal = await userSays('Where is my parcel?');
    const { events, outcome } = await runExecutor(executor(service.url), journal, { turn: 3 });
    expect(service.bodies).toEqual([
      {
        version: 1,
        participant: 'shipping',
        sessionId: 'session-1',
        branchId: 'main',
        turn: 3,
        messages: [{ role: 'user', content: 'Where is my parcel?', id: journal.messages[0]!.id }],
      },
    ]);
    expect(events.filter((e) => e.type === 'message.delta').map((e) => e.type === 'message.delta' && e.delta)).toEqual([
      'Your parcel ',
      'ships today.',
    ]);
    expect(outcome).toMatchObject({
      type: 'reply',
      message: { role: 'assistant', agent: 'shipping', content: 'Your parcel ships today.', seq: 2 },
    });
    expect(outcome.usage).toMatchObject({ inputTokens: 12, outputTokens: 4, requests: 1 });
    expect(journal.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('retries a 503 and succeeds on the next attempt', async () => {
    const service = await remoteService((_body, response, attempt) => {
      if (attempt === 1) {
        response.writeHead(503).end('busy');
        return;
      }
      ndjson(response, ['{"type":"handoff","target":"billing","reason":"a charge"}']);
    });
    const { outcome } = await runExecutor(executor(service.url), await userSays('I was charged'));
    expect(service.bodies).toHaveLength(2);
    expect(outcome).toMatchObject({ type: 'handoff', target: 'billing', reason: 'a charge' });
  });

  it('does not retry a 400: a RemoteExecutorError names the status and the body', async () => {
    const service = await remoteService((_body, response) => response.writeHead(400).end('missing participant'));
    const failure = await runExecutor(executor(service.url), await userSays('hi')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RemoteExecutorError);
    expect(failure).toMatchObject({ failure: 'status', status: 400, attempts: 1, code: 'REMOTE_EXECUTOR' });
    expect((failure as Error).message).toContain('missing participant');
    expect(service.bodies).toHaveLength(1);
  });

  it('times out a service that does not answer, after its retries', async () => {
    const service = await remoteService(() => undefined); // never answers
    const journal = await userSays('hi');
    const failure = await runExecutor(executor(service.url, { timeoutMs: 150, retries: 1 }), journal).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RemoteExecutorError);
    expect(failure).toMatchObject({ failure: 'timeout', attempts: 2 });
    expect(service.bodies).toHaveLength(2);
    expect(journal.messages).toHaveLength(1); // nothing committed
  });

  it('times out a silent service even when garbage collections run while it waits', async () => {
    // Node holds an AbortSignal.any's sources weakly: a collected timeout signal never fires (nodejs/node#57736).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const service = await remoteService(() => undefined);
    const collections = setInterval(gc, 5);
    try {
      const outcome = runExecutor(executor(service.url, { timeoutMs: 150, retries: 0 }), await userSays('hi'));
      const guard = new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting after 10 s'));
      const failure = await Promise.race([outcome.catch((error: unknown) => error), guard]);
      expect(failure).toBeInstanceOf(RemoteExecutorError);
      expect(failure).toMatchObject({ failure: 'timeout', attempts: 1 });
    } finally {
      clearInterval(collections);
    }
  });

  it('rejects a malformed line with a protocol error naming the line, and commits nothing', async () => {
    const service = await remoteService((_body, response) =>
      ndjson(response, ['{"type":"delta","text":"Hel"}', '{"type":"delta",', '{"type":"reply","text":"Hello"}']),
    );
    const journal = await userSays('hi');
    const failure = await runExecutor(executor(service.url), journal).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RemoteExecutorError);
    expect(failure).toMatchObject({ failure: 'protocol', status: 200 });
    expect((failure as Error).message).toContain('line 2');
    expect(journal.messages).toHaveLength(1);
  });

  it('rejects an unknown event type and an answer that ends without a reply', async () => {
    const unknown = await remoteService((_body, response) => ndjson(response, ['{"type":"shout","text":"HI"}']));
    await expect(runExecutor(executor(unknown.url), await userSays('hi'))).rejects.toThrow(
      /line 1 is not a step event/,
    );
    const cut = await remoteService((_body, response) => ndjson(response, ['{"type":"delta","text":"Hel"}']));
    await expect(runExecutor(executor(cut.url), await userSays('hi'))).rejects.toThrow(/ended without a reply/);
  });

  it('a cancelled turn throws AbortedError and does not retry', async () => {
    const controller = new AbortController();
    const service = await remoteService(() => controller.abort()); // cancelled while the service works
    const failure = await runExecutor(executor(service.url, { timeoutMs: 5000 }), await userSays('hi'), {
      signal: controller.signal,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AbortedError);
    expect(service.bodies).toHaveLength(1);
  });
});
