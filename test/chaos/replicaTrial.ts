/**
 * One trial of the `--replicas` campaign: two `@baton/server` processes (`replicaServerChild.ts`) on
 * the trial's store behind a round-robin proxy on 127.0.0.1; the customer (this process) talks HTTP
 * to the proxy. Each replica process takes the plan's next kill point and SIGKILLs itself there (so
 * the replica that dies is the one running the turn's writes, tools or model calls); a dead replica
 * is started again at once on the same port. Then the campaign's oracle judges the store and side
 * log, and the stream oracle what the customer received.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { startProxy } from '../../packages/server/test/support/replicas.js';
import type { FerretServer } from './ferretServer.js';
import { judgeTrial, type TranscriptEntry, transcriptOf, type Violation } from './oracle.js';
import { ReplicaCustomer } from './replicaCustomer.js';
import type { ReplicaOrders } from './replicaServerChild.js';
import { SESSION_ID, type TrialPlan, type TrialResult } from './runTrial.js';
import { readSideLog, SideLog } from './sideLog.js';
import { judgeStreams } from './streamOracle.js';
import { openTrialStore, type TrialConfig, type TrialStore } from './trialConfig.js';

const SERVER = fileURLToPath(new URL('./replicaServerChild.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A conversation still running after this is stopped and reported as `child-error`. */
const CONVERSATION_TIMEOUT_MS = 180_000;
/** The replicas' branch lease TTL and reconcile interval, in ms: a cut turn is resumed about 1.25 s after its replica died. */
const LEASE_MS = 1_000;
const RECONCILE_MS = 250;

/** A replica trial: the process campaign's plan (kills: one per replica process, in start order) plus how many replicas serve. */
export interface ReplicaTrialPlan extends TrialPlan {
  replicas: number;
}

/** What replica trials share: a work folder, the campaign's FerretDB for MongoStore trials, a stop signal. */
export interface ReplicaTrialEnvironment {
  workDir: string;
  ferret?: FerretServer | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Runs a replica trial to its end and judges it.
 * @param reference the uninterrupted run's transcript; without one the trial is its own reference
 * @example
 * ```ts
 * const result = await runReplicaTrial({ ...plan, replicas: 2 }, { workDir }, reference);
 * ```
 */
export async function runReplicaTrial(
  plan: ReplicaTrialPlan,
  env: ReplicaTrialEnvironment,
  reference?: readonly TranscriptEntry[],
): Promise<TrialResult> {
  const name = `t-${randomBytes(5).toString('hex')}`;
  const dir = join(env.workDir, name);
  await mkdir(dir, { recursive: true });
  const store: TrialStore =
    plan.store === 'file'
      ? { kind: 'file', directory: join(dir, 'store') }
      : { kind: 'mongo', url: ferretOf(env).url, dbName: `chaos_${name.replace('-', '_')}` };
  const trial: TrialConfig = {
    store,
    every: plan.every,
    keep: plan.keep,
    sessionId: SESSION_ID,
    sideLog: join(dir, 'side.jsonl'),
  };
  if (plan.delaySeed !== undefined) trial.delaySeed = plan.delaySeed;
  if (plan.window !== undefined) trial.window = plan.window;
  if (store.kind === 'mongo') await ferretOf(env).whileUp(async () => (await openTrialStore(store)).close());

  const violations: Violation[] = [];
  const pool = new ReplicaPool(trial, plan, dir);
  const sideLog = new SideLog(trial.sideLog);
  let began = Date.now();
  const customer = new ReplicaCustomer(SESSION_ID, sideLog);
  const stop = () => void pool.stop();
  env.signal?.addEventListener('abort', stop, { once: true });
  try {
    const proxy = await startProxy(await pool.start());
    began = Date.now(); // the conversation's time: the replicas serve
    try {
      await customer.run(proxy.url, began + CONVERSATION_TIMEOUT_MS);
    } finally {
      await pool.stop();
      await proxy.close();
    }
  } catch (error) {
    violations.push({
      invariant: 'child-error',
      detail: `the customer failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    });
  } finally {
    env.signal?.removeEventListener('abort', stop);
    await pool.stop();
  }
  sideLog.close();
  env.signal?.throwIfAborted();
  const lastChildMs = Date.now() - began;
  for (const error of pool.errors) violations.push({ invariant: 'child-error', detail: error });

  const evidence = await readEvidence(store, trial.sideLog);
  let transcript: TranscriptEntry[] = [];
  if ('error' in evidence) violations.push({ invariant: 'store-unreadable', detail: evidence.error });
  else {
    transcript = transcriptOf(evidence.messages);
    violations.push(...judgeTrial(evidence, reference ?? transcript));
    violations.push(...judgeStreams(customer.witness, evidence.messages));
  }
  const labels: string[] = [];
  if (plan.labels)
    for (let index = 0; index < plan.replicas; index += 1)
      labels.push(
        ...(await readFile(join(dir, `labels-${index}.txt`), 'utf8').catch(() => '')).split('\n').filter(Boolean),
      );
  const retryCodes: Record<string, number> = {};
  for (const record of readSideLog(trial.sideLog))
    if (record.t === 'retry') retryCodes[record.code] = (retryCodes[record.code] ?? 0) + 1;
  const retries = Object.values(retryCodes).reduce((a, b) => a + b, 0);
  const result: TrialResult = {
    plan,
    violations,
    crashes: pool.crashes,
    retries,
    points: labels.length,
    lastChildMs,
    labels,
    transcript,
    retryCodes,
  };
  if (violations.length > 0) {
    await writeFile(
      join(dir, 'plan.json'),
      JSON.stringify({ plan, violations, counts: customer.counts, events: [...customer.witness.events] }, null, 2),
    );
    return { ...result, keptAt: store.kind === 'file' ? dir : `${dir} and database ${store.dbName}` };
  }
  await rm(dir, { recursive: true, force: true });
  if (store.kind === 'mongo') await dropDatabase(store).catch(() => dropDatabase(store).catch(() => {}));
  return result;
}

/** A replica process started ahead, its modules loaded, waiting for its orders on stdin. */
interface Standby {
  child: ChildProcess;
  stderr(): string;
}

/**
 * The trial's replica processes: each slot keeps its port; a process that dies is replaced on it at
 * once by the standby (a process started ahead, so the slot serves again within milliseconds).
 */
class ReplicaPool {
  readonly errors: string[] = [];
  crashes = 0;
  readonly #kills: number[];
  readonly #children = new Set<ChildProcess>();
  #standby: Standby | undefined;
  #started = 0;
  #stopping = false;

  constructor(
    readonly trial: TrialConfig,
    readonly plan: ReplicaTrialPlan,
    readonly dir: string,
  ) {
    this.#kills = [...plan.kills];
  }

  /** Starts every slot; resolves with their URLs. */
  start(): Promise<string[]> {
    return Promise.all(Array.from({ length: this.plan.replicas }, (_, slot) => this.#serve(slot, 0)));
  }

  /** SIGKILLs every replica process (and the standby) and waits for them to exit. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const exits = [...this.#children].map((c) => new Promise((resolve) => c.once('exit', resolve)));
    for (const child of this.#children) child.kill('SIGKILL');
    await Promise.all(exits);
  }

  /** Starts a process that loads the replica's modules and waits for its orders. */
  #prepare(): Standby {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', SERVER], {
      cwd: ROOT,
      env: {
        ...process.env,
        CHAOS_TRIAL: JSON.stringify(this.trial),
        CHAOS_LEASE_MS: String(LEASE_MS),
        CHAOS_RECONCILE_MS: String(RECONCILE_MS),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-3000);
    });
    return { child, stderr: () => stderr };
  }

  /** Puts a replica process in `slot` (on `port`, 0: any), the next standby ready; resolves with its URL once it serves. */
  #serve(slot: number, port: number): Promise<string> {
    if (this.#stopping) return Promise.reject(new Error('the trial stopped'));
    const { child, stderr } =
      this.#standby !== undefined && this.#standby.child.exitCode === null ? this.#standby : this.#prepare();
    this.#standby = this.#prepare();
    const killAt = this.#kills.shift() ?? 0;
    const index = this.#started;
    this.#started += 1;
    const orders: ReplicaOrders = {
      killAt,
      child: index,
      port,
      ...(this.plan.labels ? { labelsFile: join(this.dir, `labels-${slot}.txt`) } : {}),
    };
    child.stdin?.end(`${JSON.stringify(orders)}\n`);
    return new Promise((resolve, reject) => {
      let url: string | undefined;
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /READY (\S+)\n/.exec(out);
        if (match === null || url !== undefined) return;
        url = match[1] as string;
        resolve(url);
      });
      child.once('exit', (code, signal) => {
        if (this.#stopping) {
          if (url === undefined) reject(new Error('the trial stopped before the replica served'));
          return;
        }
        if (signal === 'SIGKILL' && killAt > 0) this.crashes += 1;
        else
          this.errors.push(
            `replica ${index} (slot ${slot}, kill point ${killAt}) exited with ${code ?? signal}: ${stderr().trim().slice(-1500)}`,
          );
        if (this.errors.length >= 3) {
          if (url === undefined) reject(new Error(`replica ${index} did not start: ${stderr().trim().slice(-1500)}`));
          return;
        }
        // The slot keeps its port: the proxy goes on sending there, and reaches the new process once it listens.
        const again = this.#serve(slot, url === undefined ? port : Number(new URL(url).port));
        if (url === undefined) again.then(resolve, reject);
        else again.catch(() => {});
      });
    });
  }
}

function ferretOf(env: ReplicaTrialEnvironment): FerretServer {
  if (env.ferret === undefined) throw new Error('A MongoStore trial needs the campaign FerretDB.');
  return env.ferret;
}

/** The stored history and session, read by a new store object, with the side log. */
async function readEvidence(store: TrialStore, sideLogPath: string) {
  try {
    const reader = await openTrialStore(store);
    try {
      return {
        messages: await reader.readMessages(SESSION_ID, 'main'),
        session: await reader.getSession(SESSION_ID),
        sideLog: readSideLog(sideLogPath),
      };
    } finally {
      await reader.close();
    }
  } catch (error) {
    return {
      error: `the store cannot be read: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    };
  }
}

async function dropDatabase(store: Extract<TrialStore, { kind: 'mongo' }>): Promise<void> {
  const client = new MongoClient(store.url, { serverSelectionTimeoutMS: 15_000 });
  try {
    await client.db(store.dbName).dropDatabase();
  } finally {
    await client.close();
  }
}
