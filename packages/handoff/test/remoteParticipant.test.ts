import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RemoteExecutor, RemoteExecutorError, type RemoteStepRequest } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, disposeStores, embeddedStores, lastOf, ofType, scriptedAgent } from './support/helpers.js';

/** A shipping service on 127.0.0.1: it fails with 503 while `down` is set, else answers in JSON Lines. */
async function shippingService() {
  const state = { down: false, bodies: [] as RemoteStepRequest[] };
  const server: Server = createServer((request, response: ServerResponse) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(text) as RemoteStepRequest;
      state.bodies.push(body);
      if (state.down) {
        response.writeHead(503).end('maintenance');
        return;
      }
      const said = body.messages.findLast((m) => m.role === 'user')?.content ?? '';
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.end(
        `${JSON.stringify({ type: 'delta', text: 'Parcel ' })}\n${JSON.stringify({ type: 'reply', text: `Parcel update for: ${said}` })}\n`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/step`;
  return { url, state, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe.each(embeddedStores())('RemoteExecutor as a participant on %s', (_name, makeStore) => {
  afterAll(disposeStores);

  it('answers after a handoff; when the service is down the turn fails with RemoteExecutorError and loses nothing', async () => {
    const service = await shippingService();
    try {
      const store = await makeStore();
      const triage = scriptedAgent('triage', (request) =>
        lastOf(request)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_shipping', arguments: {} }] }
          : { text: 'Anything else?' },
      );
      const shipping = new RemoteExecutor({
        name: 'shipping',
        description: 'Parcels.',
        url: service.url,
        retries: 1,
        minRetryDelayMs: 10,
      });
      const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, shipping).store(store).build();
      const session = await desk.session({ id: 'remote-1' });

      const events = await collect(session.send('Where is my parcel?'));
      expect(ofType(events, 'message.delta')).toEqual([
        expect.objectContaining({ agent: 'shipping', delta: 'Parcel ' }),
      ]);
      expect(events.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
      expect(service.state.bodies[0]).toMatchObject({
        participant: 'shipping',
        sessionId: 'remote-1',
        branchId: 'main',
        turn: 1,
      });
      expect((await store.readMessages('remote-1', 'main')).at(-1)).toMatchObject({
        agent: 'shipping',
        content: 'Parcel update for: Where is my parcel?',
      });

      service.state.down = true;
      const failed = session.send('And my second parcel?');
      await expect(collect(failed)).rejects.toBeInstanceOf(RemoteExecutorError);
      expect(service.state.bodies).toHaveLength(3); // one attempt and one retry
      expect(
        (await store.readMessages('remote-1', 'main')).filter((m) => m.role === 'user').map((m) => m.content),
      ).toEqual(['Where is my parcel?', 'And my second parcel?']);

      service.state.down = false;
      const resumed = await collect((await desk.session({ id: 'remote-1' })).resume());
      expect(resumed.at(-1)).toMatchObject({ type: 'turn.completed' });
      expect((await store.readMessages('remote-1', 'main')).at(-1)).toMatchObject({
        agent: 'shipping',
        content: 'Parcel update for: And my second parcel?',
      });
    } finally {
      await service.close();
    }
  });
});
