/**
 * Round trips of a handoff turn on MongoStore (the run's FerretDB, or MONGODB_URL), counted with the
 * driver's command monitoring: a plain handoff turn (user message, the coordinator's handoff call,
 * its result, the specialist's answer) is one `insert` of its four messages, one `insert` of the
 * turn-end checkpoint and the session's compare-and-set (one `findAndModify`; on FerretDB one more
 * `insert` of a version claim, and a `delete` of old claims every 16th version). Checkpoints are
 * read and pruned once every 5 turns (keep last 5), not every turn; a prune deletes pending writes
 * only of checkpoints that have some. A stateless worker (one that opens the session from the store
 * for every turn, as `bench:scale`'s workers do) adds the open's four `find`s. Mirrors
 * packages/handoff/test/handoff.roundTrips.test.ts, which counts store calls on InMemoryStore and FileStore.
 */
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
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

/** The support desk of these tests: triage hands every customer message to billing, which answers. */
function desk(store: MongoStore): HandoffWorkflow {
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a charge' } }] }
      : { text: 'Anything else?' },
  );
  const billing = scriptedAgent('billing', (request) => ({
    text: `Answer to: ${request.messages.findLast((m) => m.role === 'user')?.content ?? ''}`,
  }));
  return new HandoffBuilder({ name: 'desk' }).participants(triage, billing).coordinator(triage).store(store).build();
}

/** A turn's commands without the ones due only every few turns (the prune's, the claim sweep). */
function everyTurn(counts: Record<string, number>): Record<string, number> {
  const {
    'delete baton_versionClaims': _sweeps,
    'delete baton_checkpoints': _prunes,
    'delete baton_pendingWrites': _writePrunes,
    ...rest
  } = counts;
  return rest;
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
    const workflow = desk(store);
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
      // No checkpoint got pending writes, so the prune deletes no pending writes.
      expect([prunes, writePrunes], `turn ${turn}`).toEqual(turn === 10 ? [1, 0] : [0, 0]);
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

  it('a stateless worker: the open reads four documents, the turn writes as above, nothing else in steady state', async () => {
    const store = new MongoStore({ client }, { dbName });
    const workflow = desk(store);
    const acme = { tenantId: 'acme' };
    const perTurn: Record<string, number>[] = [];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      commands = [];
      // A worker that keeps nothing of the session between turns opens it for each (the branch named: no branch list).
      const session = await workflow.session({ id: 'stateless-worker', branch: 'main', ...acme });
      const events = await collect(session.send(`question ${turn}`));
      expect(events.at(-1)?.type).toBe('turn.completed');
      perTurn.push(tally(commands));
    }
    const steady: Record<string, number> = {
      'find baton_sessions': 1,
      'find baton_branches': 1,
      'find baton_checkpoints': 1,
      'find baton_messages': 1,
      'insert baton_messages': 1,
      'insert baton_checkpoints': 1,
      'findAndModify baton_sessions': 1,
    };
    if (ferretDb) steady['insert baton_versionClaims'] = 1;
    for (const [index, counts] of perTurn.entries()) {
      const turn = index + 1;
      if (turn === 1) continue; // the first turn creates the session
      const expected = { ...steady };
      // The prune's manifest read at turns 5 and 10 (its deletes are checked by the test above).
      if (turn % 5 === 0) expected['find baton_checkpoints'] = 2;
      expect(everyTurn(counts), `turn ${turn}: ${JSON.stringify(counts)}`).toEqual(expected);
    }
    const steadyTurns = perTurn.slice(1).filter((_, index) => (index + 2) % 5 !== 0);
    const roundTrips = steadyTurns.map((counts) => Object.values(counts).reduce((a, b) => a + b, 0));
    console.log(
      `MongoStore (${ferretDb ? 'FerretDB' : 'MongoDB'}) round trips per steady-state turn of a stateless worker: ${roundTrips.join(' ')} (${JSON.stringify(steady)})`,
    );
    expect(Math.max(...roundTrips)).toBeLessThanOrEqual(ferretDb ? 9 : 8); // 8 and 7, plus a claim sweep every 16th version
    await store.close();
  });
});
