/**
 * Round trips of a handoff turn on MongoStore (the run's FerretDB, or MONGODB_URL), counted with the
 * driver's command monitoring: a plain handoff turn (user message, the coordinator's handoff call,
 * its result, the specialist's answer) is one `insert` of its four messages, one `insert` of the
 * turn-end checkpoint and the session's compare-and-set (one `findAndModify`; on FerretDB one more
 * `insert` of a version claim, and a `delete` of old claims every 16th version). Checkpoints are
 * read and pruned once every 5 turns (keep last 5), not every turn. Mirrors
 * packages/handoff/test/handoff.roundTrips.test.ts, which counts store calls on InMemoryStore and FileStore.
 */
import { HandoffBuilder } from '@baton/handoff';
import { MongoStore } from '@baton/store-mongo';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, lastOf, scriptedAgent } from '../packages/handoff/test/support/helpers.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

const dbName = testDatabaseName('handoff_round_trips');
const TURNS = 12;

/** `<command> <collection>` of one command, e.g. `insert baton_messages`. */
function describeCommand(event: CommandStartedEvent): string {
  const target = event.command[event.commandName];
  return typeof target === 'string' ? `${event.commandName} ${target}` : event.commandName;
}

/** How many times each command ran. */
function tally(commands: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const command of commands) counts[command] = (counts[command] ?? 0) + 1;
  return counts;
}

describe('MongoStore round trips of a handoff turn', () => {
  let client: MongoClient;
  let commands: string[] = [];
  let ferretDb = false;

  beforeAll(async () => {
    client = new MongoClient(mongoTestUrl(), { monitorCommands: true, serverSelectionTimeoutMS: 5_000 });
    client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.databaseName === dbName) commands.push(describeCommand(event));
    });
    await client.connect();
    const info = await client.db(dbName).admin().command({ buildInfo: 1 });
    ferretDb = 'ferretdb' in info || 'ferretdbVersion' in info;
  });

  afterAll(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it(`${TURNS} turns: one messages insert, one checkpoint insert and the session update each; checkpoints read only when a prune is due`, async () => {
    const store = new MongoStore({ client }, { dbName });
    const triage = scriptedAgent('triage', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a charge' } }] }
        : { text: 'Anything else?' },
    );
    const billing = scriptedAgent('billing', (request) => ({
      text: `Answer to: ${request.messages.findLast((m) => m.role === 'user')?.content ?? ''}`,
    }));
    const workflow = new HandoffBuilder({ name: 'desk' })
      .participants(triage, billing)
      .coordinator(triage)
      .store(store)
      .build();
    // A tenant's session: the store checks its tenant when the session opens and remembers it, so no turn pays a round trip for it.
    const acme = { tenantId: 'acme' };
    const session = await workflow.session({ id: 'mongo-round-trips', ...acme });
    const perTurn: Record<string, number>[] = [];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      commands = [];
      const events = await collect(session.send(`question ${turn}`));
      expect(events.at(-1)?.type).toBe('turn.completed');
      perTurn.push(tally(commands));
    }

    for (const [index, counts] of perTurn.entries()) {
      const turn = index + 1;
      const {
        'delete baton_versionClaims': sweeps = 0,
        'find baton_checkpoints': checkpointReads = 0,
        'delete baton_checkpoints': prunes = 0,
        'delete baton_pendingWrites': writePrunes = 0,
        ...rest
      } = counts;
      const expected: Record<string, number> = {
        'insert baton_messages': 1,
        'insert baton_checkpoints': 1,
        'findAndModify baton_sessions': 1,
      };
      if (ferretDb) expected['insert baton_versionClaims'] = 1;
      expect(rest, `turn ${turn}: ${JSON.stringify(counts)}`).toEqual(expected);
      // The manifest is read only at the turn ends where a prune is due (turns 5 and 10); it deletes at turn 10, when 9 are stored.
      expect(checkpointReads, `turn ${turn}`).toBe(turn % 5 === 0 ? 1 : 0);
      expect([prunes, writePrunes], `turn ${turn}`).toEqual(turn === 10 ? [1, 1] : [0, 0]);
      expect(sweeps, `turn ${turn}`).toBeLessThanOrEqual(ferretDb ? 1 : 0);
    }
    const roundTrips = perTurn.map((counts) => Object.values(counts).reduce((a, b) => a + b, 0));
    console.log(
      `MongoStore (${ferretDb ? 'FerretDB, version claims' : 'MongoDB'}) round trips per handoff turn: ${roundTrips.join(' ')}`,
    );

    const stored = await store.readMessages('mongo-round-trips', 'main', acme);
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 4 * TURNS }, (_, index) => index + 1));
    expect((await store.listCheckpoints('mongo-round-trips', 'main', acme)).length).toBe(7);
    await store.close();
  });
});
