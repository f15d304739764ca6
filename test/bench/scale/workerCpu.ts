/**
 * One stateless worker's CPU per turn, in one process: the turns `bench:scale` sends a worker
 * (each opens the session from the store, `desk.session({ id, branch: 'main' })`, then sends one
 * customer message through the scale desk with instant models), run here against one `MongoStore`
 * without child processes, so that a CPU profile (`node --cpu-prof`) sees the worker's whole path.
 *
 * Prints this process's CPU milliseconds per turn (user + system, `process.cpuUsage`), the store
 * round trips per turn (connection check-outs, one per command; with `--count` also by command and
 * collection through command monitoring, which costs CPU of its own), and the load average; then
 * reads every session back and checks its history (`historyCheck.ts`).
 *
 * Store: FerretDB 1.24 on a throwaway PostgreSQL (`--backend pg`, the default when PostgreSQL's
 * server binaries are found) or on SQLite (`--backend sqlite`); `MONGODB_URL` overrides both.
 *
 * Run: npx tsx --conditions=source test/bench/scale/workerCpu.ts [--sessions 200] [--turns 3] [--concurrency 8] [--rounds 1] [--count] [--backend pg|sqlite]
 * Profile: node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx --conditions=source test/bench/scale/workerCpu.ts
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MongoStore } from '@baton/store-mongo';
import { MongoClient } from 'mongodb';
import { type MongoServer, startMongoServer } from '../../support/mongoServer.js';
import { type PostgresServer, postgresBinDir, startPostgres } from '../../support/postgresServer.js';
import { checkHistory, isClean } from './historyCheck.js';
import { answerTo, scaleDesk } from './scaleDesk.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '200' },
    turns: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '1' },
    count: { type: 'boolean', default: false },
    backend: { type: 'string' },
  },
});
const sessions = Number(values.sessions);
const turnsPerSession = Number(values.turns);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

let postgres: PostgresServer | undefined;
let mongo: MongoServer | undefined;
let url = process.env.MONGODB_URL ?? '';
if (url === '') {
  const backend = values.backend ?? (postgresBinDir() === undefined ? 'sqlite' : 'pg');
  if (backend === 'pg') postgres = await startPostgres({ settings: { max_connections: '200' } });
  mongo = await startMongoServer(postgres === undefined ? {} : { postgresqlUrl: postgres.url });
  url = mongo.url;
}

const client = new MongoClient(url, { monitorCommands: values.count });
let commands = 0;
let checkouts = 0;
let byName: Record<string, number> = {};
if (values.count) {
  client.on('commandStarted', (event) => {
    commands += 1;
    const name = `${event.commandName} ${String(event.command[event.commandName])}`;
    byName[name] = (byName[name] ?? 0) + 1;
  });
}
client.on('connectionCheckedOut', () => (checkouts += 1));
await client.connect();

try {
  for (let round = 0; round < rounds; round += 1) {
    const dbName = `baton_worker_cpu_${round}_${Math.random().toString(36).slice(2, 8)}`;
    const store = new MongoStore({ client }, { dbName });
    await store.init();
    const desk = scaleDesk(store, 0);
    const turn = async (sessionId: string, text: string) => {
      const session = await desk.session({ id: sessionId, branch: 'main' });
      for await (const event of session.send(text)) {
        if (event.type === 'error' && event.fatal) throw new Error(event.message);
      }
    };
    // Warm-up: sessions of its own, so the code is compiled before the counters start.
    for (let t = 0; t < 60; t += 1) await turn(`warm-up-${t % 20}`, `warm-up ${t}`);

    const texts = new Map<string, string[]>();
    const queue: Array<[string, number]> = [];
    for (let t = 0; t < turnsPerSession; t += 1) for (let s = 0; s < sessions; s += 1) queue.push([`customer-${s}`, t]);
    commands = 0;
    checkouts = 0;
    byName = {};
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    // `concurrency` turns at once, never two of one session (a customer waits for the answer).
    const busy = new Set<string>();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const index = queue.findIndex(([id]) => !busy.has(id));
          if (index === -1) {
            if (queue.length === 0) return;
            await new Promise((resolve) => setTimeout(resolve, 1));
            continue;
          }
          const [sessionId, t] = queue.splice(index, 1)[0]!;
          busy.add(sessionId);
          const text = `session ${sessionId} turn ${t}`;
          await turn(sessionId, text);
          texts.set(sessionId, [...(texts.get(sessionId) ?? []), text]);
          busy.delete(sessionId);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const turns = sessions * turnsPerSession;
    const perTurn = (cpu.user + cpu.system) / 1000 / turns;
    // Counted before the history check below, which reads every session once more.
    const named = Object.entries(byName)
      .map(([name, n]) => `${name} ${(n / turns).toFixed(2)}`)
      .join(', ');
    const trips = `, ${(checkouts / turns).toFixed(2)} round trips per turn${values.count ? ` (${(commands / turns).toFixed(2)} commands monitored: ${named})` : ''}`;
    let faults = 0;
    for (const [sessionId, sent] of texts) {
      if (!isClean(checkHistory(await store.readMessages(sessionId, 'main'), sent, answerTo, new Set()))) faults += 1;
    }
    console.log(
      `round ${round + 1}: ${turns} turns in ${seconds.toFixed(1)} s, worker CPU ${perTurn.toFixed(2)} ms per turn (user ${(cpu.user / 1000 / turns).toFixed(2)}, system ${(cpu.system / 1000 / turns).toFixed(2)})${trips}; history check ${faults === 0 ? 'ok' : `FAILED for ${faults} sessions`}; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    if (faults > 0) process.exitCode = 1;
    await store.db.dropDatabase();
  }
} finally {
  await client.close();
  await mongo?.close();
  await postgres?.close();
}
