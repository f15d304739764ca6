/**
 * Baton beside its peers, measured in one run: each framework runs the scenario of scenario.ts in a
 * child process of its own (so no framework's garbage or JIT state weighs on another's figures).
 *
 * `cpu` (printed first): every framework's CPU per turn at `--history` turns of history (default 100), beside
 * Baton's, in rounds that alternate between the frameworks (forward, then backward), all children alive at once,
 * so each sees the same load at nearly the same moment. Each child first builds its conversations to that length;
 * a round is one turn on each of its conversations (Baton: 200, so that a round is long enough to time; the peers:
 * 1–4), timed with `process.cpuUsage` (the child's whole process, garbage-collector threads included). Prints per
 * framework the median µs of CPU per turn over the rounds, the spread (lowest–highest round), and how many times
 * Baton's turn that is (median of the per-round ratios, and the lowest).
 *
 * `table`: per framework, one child after another:
 * - per-turn time at 10, 100 and 500 turns of history (wall, and the child's CPU time in brackets;
 *   the mean of 5 turns after the history reached that length),
 * - bytes the framework's persistence holds after 100 and 500 turns,
 * - time to restore and resume after an approval at 505 turns (new agent/graph objects over the
 *   same persistence, approve, run to the end of the turn),
 * - duplicated items in the model's input after that restore.
 *
 * Peers at the releases a user installs today that declare Node ≥ 22 live in `bench/peers/current`
 * (`npm ci --prefix bench/peers/current`); without that install they are left out, and the bench says so.
 *
 * Run: pnpm bench:peers [--only cpu,table] [--history 100] [--rounds 15] [--turns 500]   (from the repository root)
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as openaiAgents from '@openai/agents';
import { batonRunner } from './batonRunner.js';
import { alternateRounds, printCpuTable } from './cpuRounds.js';
import { langgraphRunner } from './langgraphRunner.js';
import { type MastraModule, mastraRunner } from './mastraRunner.js';
import { openaiAgentsRunner } from './openaiAgentsRunner.js';
import { customerText, duplicates, type PeerRunner } from './scenario.js';

const CURRENT = new URL('../current/', import.meta.url);
const installed = (pkg: string) => existsSync(new URL(`node_modules/${pkg}/package.json`, CURRENT));
const currentVersion = (pkg: string) => versionOf(new URL(`node_modules/${pkg}/package.json`, CURRENT).href);

interface Peer {
  /** Builds one conversation's runner. */
  runner(): Promise<PeerRunner>;
  /** Conversations per round of the `cpu` phase. */
  perRound: number;
  /** Why it is left out, when it is. */
  missing?: string;
}

const NOT_INSTALLED = 'not installed: npm ci --prefix bench/peers/current';
const PEERS: Record<string, Peer> = {
  baton: { runner: () => batonRunner(versionOf('../../../packages/handoff/package.json')), perRound: 200 },
  'openai-agents': {
    runner: async () =>
      openaiAgentsRunner(
        currentVersion('@openai/agents'),
        (await import(new URL('openaiAgents.js', CURRENT).href)) as typeof openaiAgents,
      ),
    perRound: 4,
    ...(installed('@openai/agents') ? {} : { missing: NOT_INSTALLED }),
  },
  'openai-agents-0.14': {
    runner: () => openaiAgentsRunner(versionOf('../node_modules/@openai/agents/package.json'), openaiAgents),
    perRound: 4,
  },
  langgraph: {
    runner: () =>
      langgraphRunner(
        `${versionOf('../node_modules/@langchain/langgraph/package.json')} + swarm ${versionOf('../node_modules/@langchain/langgraph-swarm/package.json')}`,
      ),
    perRound: 2,
  },
  mastra: {
    runner: async () =>
      mastraRunner(currentVersion('@mastra/core'), (await import(new URL('mastra.js', CURRENT).href)) as MastraModule),
    perRound: 1,
    ...(installed('@mastra/core') && installed('@mastra/memory') ? {} : { missing: NOT_INSTALLED }),
  },
};

const HISTORY = [10, 100, 500] as const;
const MEASURED = 5;

function versionOf(relative: string): string {
  return (JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { version: string }).version;
}

/** What one framework measured (a child prints it as its last line). */
interface PeerResult {
  name: string;
  perTurn: Record<number, { wallMs: number; cpuMs: number }>;
  bytes: Record<number, number>;
  restoreMs: number;
  inputItems: number;
  duplicates: number;
}

async function measure(runner: PeerRunner, maxHistory: number): Promise<PeerResult> {
  const windows = HISTORY.filter((h) => h <= Math.max(maxHistory, HISTORY[0]));
  const perTurn: PeerResult['perTurn'] = {};
  const bytes: PeerResult['bytes'] = {};
  const last = Math.max(maxHistory, ...windows.map((h) => h + MEASURED));
  for (let n = 1; n <= last; n += 1) {
    const history = n - 1;
    const window = windows.find((h) => history >= h && history < h + MEASURED);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await runner.turn(customerText(n));
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (window !== undefined) {
      const entry = perTurn[window] ?? { wallMs: 0, cpuMs: 0 };
      entry.wallMs += wallMs / MEASURED;
      entry.cpuMs += (used.user + used.system) / 1000 / MEASURED;
      perTurn[window] = entry;
    }
    if (n === 100 || n === maxHistory) bytes[n] = await runner.persistedBytes();
  }
  await runner.pauseOnApproval();
  const restoreMs = await runner.restoreAndApprove();
  const keys = runner.inputAfterRestore();
  return { name: runner.name, perTurn, bytes, restoreMs, inputItems: keys.length, duplicates: duplicates(keys) };
}

function runChild(peer: string, turns: number): Promise<PeerResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--peer', peer, '--turns', String(turns)], {
      execArgv: ['--import', 'tsx', '--conditions=source'],
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as PeerResult);
      else reject(new Error(`${peer} exited with ${code}: ${out.slice(-2000)}`));
    });
  });
}

const kb = (n: number | undefined) => (n === undefined ? '–' : `${(n / 1024).toFixed(0)} KB`);

async function table(peers: string[], turns: number): Promise<void> {
  const results: PeerResult[] = [];
  for (const peer of peers) results.push(await runChild(peer, turns));
  const windows = HISTORY.filter((h) => h <= turns);
  const head = [
    ...windows.map((h) => `ms/turn at ${h} (CPU)`),
    'persisted after 100 turns',
    `after ${turns}`,
    `restore + resume after approval at ${turns + MEASURED}`,
    'duplicates in model input after restore',
  ];
  console.log(`| framework | ${head.join(' | ')} |`);
  console.log(`|---|${head.map(() => '---').join('|')}|`);
  for (const r of results) {
    const cells = windows.map((h) => `${r.perTurn[h]?.wallMs.toFixed(1)} (${r.perTurn[h]?.cpuMs.toFixed(1)})`);
    cells.push(
      kb(r.bytes[100]),
      kb(r.bytes[turns]),
      `${r.restoreMs.toFixed(1)} ms`,
      `${r.duplicates} of ${r.inputItems}`,
    );
    console.log(`| ${r.name} | ${cells.join(' | ')} |`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      peer: { type: 'string' },
      serve: { type: 'boolean', default: false },
      turns: { type: 'string', default: '500' },
      history: { type: 'string', default: '100' },
      rounds: { type: 'string', default: '15' },
      only: { type: 'string', default: 'cpu,table' },
    },
  });
  const turns = Number(values.turns);
  const peer = values.peer === undefined ? undefined : PEERS[values.peer];
  if (peer !== undefined && values.serve) {
    const { serveRounds } = await import('./cpuRounds.js');
    await serveRounds(peer.runner, peer.perRound, Number(values.history));
    return;
  }
  if (peer !== undefined) {
    // Warm-up on a conversation of its own (JIT, lazy imports): a few turns, a pause, a restore.
    await measure(await peer.runner(), 3);
    const result = await measure(await peer.runner(), turns);
    console.log(JSON.stringify(result));
    return;
  }
  const phases = new Set(values.only.split(','));
  console.log(
    `cores: ${availableParallelism()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}; instant fake models, in-memory persistence`,
  );
  for (const [name, p] of Object.entries(PEERS)) if (p.missing) console.log(`${name} left out: ${p.missing}`);
  const peers = Object.keys(PEERS).filter((name) => PEERS[name]?.missing === undefined);
  if (phases.has('cpu')) {
    const history = Number(values.history);
    const rounds = await alternateRounds(fileURLToPath(import.meta.url), peers, history, Number(values.rounds));
    console.log(
      `\nCPU per turn at ${history} turns of history, alternating rounds (load average ${loadavg()[0]?.toFixed(2)}):\n`,
    );
    printCpuTable(rounds, 'baton');
  }
  if (phases.has('table')) {
    console.log('');
    await table(peers, turns);
  }
}

await main();
