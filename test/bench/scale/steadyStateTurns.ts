/**
 * Round trips of a steady-state turn served by a stateless worker, counted by command: the scale
 * workers' code path (open the session from the store, send one customer message, as
 * scaleWorker.ts does) run in this process, one turn at a time, on a `MongoClient` with the
 * driver's command monitoring (`monitorCommands: true`, one `commandStarted` event per command).
 * A session's first turn (which creates it) is not counted; every later turn is, prunes and claim
 * sweeps included, so the mean is what a long conversation pays per turn.
 */
import { MongoStore } from '@baton/store-mongo';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { scaleDesk } from './scaleDesk.js';

/** What {@link steadyStateRoundTrips} counted. */
export interface SteadyStateCount {
  /** Turns counted (a session's second and later turns). */
  turns: number;
  /** Mean round trips (commands) per counted turn. */
  perTurn: number;
  /** The fewest and most round trips of one counted turn. */
  min: number;
  max: number;
  /** Mean commands per counted turn by `<command> <collection>`, e.g. `find baton_sessions`. */
  byCommand: Record<string, number>;
}

/**
 * Serves `sessions` × `turnsPerSession` turns one at a time, each through a fresh open of the
 * session, in a database of its own (dropped afterwards), and counts the commands of every turn
 * but a session's first.
 * @param url the MongoDB (or FerretDB) to measure
 * @example
 * ```ts
 * const count = await steadyStateRoundTrips('mongodb://127.0.0.1:27017/', { sessions: 4, turnsPerSession: 11 });
 * console.log(count.perTurn, count.byCommand); // 8.3 { 'find baton_sessions': 1, … }
 * ```
 */
export async function steadyStateRoundTrips(
  url: string,
  options: { sessions: number; turnsPerSession: number },
): Promise<SteadyStateCount> {
  const dbName = `baton_scale_steady_${Math.random().toString(36).slice(2, 8)}`;
  const client = new MongoClient(url, { monitorCommands: true, serverSelectionTimeoutMS: 5_000 });
  let commands: string[] = [];
  client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName !== dbName) return;
    const target = event.command[event.commandName];
    commands.push(typeof target === 'string' ? `${event.commandName} ${target}` : event.commandName);
  });
  await client.connect();
  const store = new MongoStore({ client }, { dbName });
  try {
    await store.init();
    const desk = scaleDesk(store, 0);
    const counted: string[][] = [];
    for (let s = 0; s < options.sessions; s += 1) {
      for (let t = 0; t < options.turnsPerSession; t += 1) {
        commands = [];
        const session = await desk.session({ id: `steady-${s}`, branch: 'main' });
        for await (const event of session.send(`session ${s} turn ${t}`)) {
          if (event.type === 'error' && event.fatal) throw new Error(event.message);
        }
        if (t > 0) counted.push(commands);
      }
    }
    const byCommand: Record<string, number> = {};
    for (const turn of counted) for (const name of turn) byCommand[name] = (byCommand[name] ?? 0) + 1;
    for (const name of Object.keys(byCommand)) byCommand[name] = byCommand[name]! / counted.length;
    const sizes = counted.map((turn) => turn.length);
    return {
      turns: counted.length,
      perTurn: sizes.reduce((a, b) => a + b, 0) / Math.max(1, counted.length),
      min: Math.min(...sizes),
      max: Math.max(...sizes),
      byCommand,
    };
  } finally {
    await store.db.dropDatabase().catch(() => undefined);
    await store.close();
    await client.close();
  }
}

/** One line for the bench's output: `8.33 round trips (min 8, max 11): find baton_sessions 1.00, …`. */
export function formatSteadyState(count: SteadyStateCount): string {
  const commands = Object.entries(count.byCommand)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, n]) => `${name} ${n.toFixed(2)}`)
    .join(', ');
  return `${count.perTurn.toFixed(2)} round trips per turn over ${count.turns} turns (min ${count.min}, max ${count.max}): ${commands}`;
}
