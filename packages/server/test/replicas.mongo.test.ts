import { afterAll, describe, expect, it } from 'vitest';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { raceReconcilersOnCutTurn } from './support/cutTurnRace.js';
import { client, type ReceivedEvent, sseMessages } from './support/httpClient.js';
import { BILLING_REPLY, type Replica, startProxy, startReplica } from './support/replicas.js';

const ids = (events: readonly ReceivedEvent[]) => events.map((e) => e.id);

describe('replicas on one MongoStore (FerretDB) behind a round-robin proxy (child processes, 127.0.0.1)', () => {
  const replicas: Replica[] = [];
  const url = mongoTestUrl();
  const dbName = testDatabaseName('replicas');

  afterAll(async () => {
    // The run's FerretDB (vitest global setup) goes with its databases.
    await Promise.all(replicas.map((replica) => replica.kill()));
  });

  it('a turn on replica 1 is followed on replica 2 mid-turn and from every event boundary after it; a send there is 409 before any model call', async () => {
    const env = { REPLICA_MONGO_URL: url, REPLICA_MONGO_DB: dbName, REPLICA_PACE_MS: '60' };
    const [one, two] = await Promise.all([startReplica(env), startReplica(env)]);
    replicas.push(one!, two!);
    const proxy = await startProxy([one!.url, two!.url]);
    try {
      const viaProxy = client(proxy.url);
      expect((await viaProxy.json('POST', '/sessions', { id: 'rr-m' })).status).toBe(201);
      expect((await client(two!.url).json('GET', '/sessions/rr-m')).status).toBe(200);
      const turn = await client(one!.url).call(
        'POST',
        '/sessions/rr-m/messages',
        { text: 'I was charged twice' },
        { accept: 'text/event-stream' },
      );
      const reference: ReceivedEvent[] = [];
      let midTurn: ReceivedEvent[] | undefined;
      let refused: { status: number; calls: number } | undefined;
      for await (const event of sseMessages(turn)) {
        reference.push(event);
        if (reference.length === 12 && midTurn === undefined) {
          const callsBefore = await two!.modelCalls();
          const send = await client(two!.url).json('POST', '/sessions/rr-m/messages', { text: 'and again' });
          refused = { status: send.status, calls: (await two!.modelCalls()) - callsBefore };
          midTurn = (
            await client(two!.url).stream('GET', '/sessions/rr-m/events', undefined, { 'last-event-id': event.id })
          ).events;
        }
      }
      expect(refused).toEqual({ status: 409, calls: 0 });
      expect(reference.length).toBeGreaterThanOrEqual(40);
      expect(
        reference
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.data.delta)
          .join(''),
      ).toBe(BILLING_REPLY);
      expect(ids([...reference.slice(0, 12), ...midTurn!])).toEqual(ids(reference));
      for (let i = 0; i < reference.length; i++) {
        const rest = await viaProxy.stream('GET', '/sessions/rr-m/events', undefined, {
          'last-event-id': reference[i]!.id,
        });
        expect(ids(rest.events), `after ${reference[i]!.id}`).toEqual(ids(reference.slice(i + 1)));
      }
    } finally {
      await proxy.close();
    }
  }, 180_000);

  it('after the owner is SIGKILLed mid-turn, three reconciling replicas take the cut turn over within lease expiry + one interval and finish it exactly once', async () => {
    await raceReconcilersOnCutTurn({ REPLICA_MONGO_URL: url, REPLICA_MONGO_DB: dbName }, 'cut-m', replicas);
  }, 180_000);
});
