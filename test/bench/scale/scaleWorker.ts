/**
 * One stateless scale-out worker: a child process that serves any turn of any session it is sent,
 * opening the session from MongoDB for each turn (nothing about a session is kept between turns, so
 * a load balancer may route each turn anywhere). It counts its MongoClient's round trips by the
 * connection pool's check-out events (the driver checks a connection out for every command, and
 * emits these events anyway); with SCALE_MONITOR_COMMANDS=1 it also counts commands by name through
 * command monitoring, which costs the worker CPU of its own (every command and reply is copied into
 * an event). Started by scaleBench.ts with SCALE_MONGODB_URL, SCALE_DB and SCALE_MODEL_LATENCY_MS;
 * talks over the IPC channel (scaleProtocol.ts).
 */
import { MongoStore } from '@baton/store-mongo';
import { MongoClient } from 'mongodb';
import { scaleDesk } from './scaleDesk.js';
import type { FromWorker, ToWorker } from './scaleProtocol.js';

const send = (message: FromWorker) => process.send?.(message);

const monitorCommands = process.env.SCALE_MONITOR_COMMANDS === '1';
const client = new MongoClient(process.env.SCALE_MONGODB_URL ?? '', { monitorCommands });
let roundTrips = 0;
let commands: Record<string, number> = {};
let turns = 0;
client.on('connectionCheckedOut', () => {
  roundTrips += 1;
});
if (monitorCommands) {
  client.on('commandStarted', (event) => {
    commands[event.commandName] = (commands[event.commandName] ?? 0) + 1;
  });
}
await client.connect();
const store = new MongoStore({ client }, { dbName: process.env.SCALE_DB ?? 'baton_scale' });
await store.init();
const desk = scaleDesk(store, Number(process.env.SCALE_MODEL_LATENCY_MS ?? 0));

async function serveTurn(id: number, sessionId: string, text: string): Promise<void> {
  try {
    // The branch is named, so opening skips the branch list read that guards against an ambiguous open.
    const session = await desk.session({ id: sessionId, branch: 'main' });
    for await (const event of session.send(text)) {
      if (event.type === 'error' && event.fatal) throw new Error(event.message);
    }
    turns += 1;
    send({ kind: 'turn', id });
  } catch (error) {
    send({ kind: 'turn', id, error: `${(error as Error).name}: ${(error as Error).message}` });
  }
}

process.on('message', (message: ToWorker) => {
  if (message.kind === 'turn') void serveTurn(message.id, message.sessionId, message.text);
  else if (message.kind === 'reset') {
    roundTrips = 0;
    commands = {};
    turns = 0;
  } else if (message.kind === 'stats') send({ kind: 'stats', roundTrips, commands, turns });
  else if (message.kind === 'exit') {
    void store.close().then(async () => {
      await client.close();
      process.exit(0);
    });
  }
});
// A driver that died leaves no worker behind.
process.on('disconnect', () => process.exit(1));
send({ kind: 'ready', pid: process.pid });
