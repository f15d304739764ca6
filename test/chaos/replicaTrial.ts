/**
 * One trial of the `--replicas` campaign: two `@baton/server` processes (`replicaServerChild.ts`) on
 * the trial's store behind a round-robin proxy on 127.0.0.1; the customer (this process) talks HTTP
 * to the proxy. Each replica process takes the plan's next kill point and SIGKILLs itself there (so
 * the replica that dies is the one running the turn's writes, tools or model calls); a dead replica
 * is started again at once on the same port. Then the campaign's oracle judges the store and side
 * log, and the stream oracle what the customer received.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProxy } from '../../packages/server/test/support/replicas.js';
import type { FerretServer } from './ferretServer.js';
import type { TranscriptEntry, Violation } from './oracle.js';
import { ReplicaCustomer } from './replicaCustomer.js';
import type { ReplicaOrders } from './replicaServerChild.js';
import type { TrialPlan, TrialResult } from './runTrial.js';
import { SideLog } from './sideLog.js';
import { type ChaosProcess, killAll, spawnChaosChild } from './spawnChaosChild.js';
import { judgeStreams } from './streamOracle.js';
import type { TrialConfig } from './trialConfig.js';
import { judgeStore, readLabels, retriesByCode } from './trialEvidence.js';
import { closeTrialWorkspace, openTrialWorkspace, SESSION_ID } from './trialWorkspace.js';

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
  const workspace = await openTrialWorkspace(plan, env, { sharedLabels: false });
  const { dir, trial } = workspace;
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

  const verdict = await judgeStore(trial, reference);
  violations.push(...verdict.violations);
  if (verdict.messages !== undefined) violations.push(...judgeStreams(customer.witness, verdict.messages));
  const labels: string[] = [];
  if (plan.labels)
    for (let index = 0; index < plan.replicas; index += 1)
      labels.push(...(await readLabels(join(dir, `labels-${index}.txt`))));
  const retryCodes = retriesByCode(trial.sideLog);
  const retries = Object.values(retryCodes).reduce((a, b) => a + b, 0);
  const result: TrialResult = {
    plan,
    violations,
    crashes: pool.crashes,
    retries,
    points: labels.length,
    lastChildMs,
    labels,
    transcript: verdict.transcript,
    retryCodes,
  };
  return closeTrialWorkspace(workspace, result, {
    plan,
    violations,
    counts: customer.counts,
    events: [...customer.witness.events],
  });
}

/** A replica process started ahead, its modules loaded, waiting for its orders on stdin. */
type Standby = ChaosProcess;

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
    await killAll(this.#children);
  }

  /**
   * Appends what a replica process wrote to stderr (its last 4,000 characters) to the trial's
   * `replicas.stderr.txt`, kept with a failing trial's data (a store write the server only logs, such
   * as an event log that could not be written, shows there).
   */
  #keepStderr(index: number, slot: number, killAt: number, exit: number | string | null, text: string): void {
    if (text.trim() === '') return;
    appendFileSync(
      join(this.dir, 'replicas.stderr.txt'),
      `── replica ${index} (slot ${slot}, kill point ${killAt}) exited with ${exit}\n${text.trimEnd()}\n`,
    );
  }

  /** Starts a process that loads the replica's modules and waits for its orders. */
  #prepare(): Standby {
    const standby = spawnChaosChild(
      'replicaServerChild.ts',
      {
        CHAOS_TRIAL: JSON.stringify(this.trial),
        CHAOS_LEASE_MS: String(LEASE_MS),
        CHAOS_RECONCILE_MS: String(RECONCILE_MS),
      },
      ['pipe', 'pipe', 'pipe'],
    );
    const child = standby.process;
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return standby;
  }

  /** Puts a replica process in `slot` (on `port`, 0: any), the next standby ready; resolves with its URL once it serves. */
  #serve(slot: number, port: number): Promise<string> {
    if (this.#stopping) return Promise.reject(new Error('the trial stopped'));
    const { process: child, stderr } =
      this.#standby !== undefined && this.#standby.process.exitCode === null ? this.#standby : this.#prepare();
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
        this.#keepStderr(index, slot, killAt, code ?? signal, stderr());
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
