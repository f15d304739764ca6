/**
 * Baton beside its peers, measured in one run: each framework runs the scenario of scenario.ts in a
 * child process of its own (so no framework's garbage or JIT state weighs on another's figures),
 * and this process prints one table:
 *
 * - per-turn time at 10, 100 and 500 turns of history (wall, and the child's CPU time in brackets;
 *   the mean of 5 turns after the history reached that length),
 * - bytes the framework's persistence holds after 100 and 500 turns,
 * - time to restore and resume after an approval at 505 turns (new agent/graph objects over the
 *   same persistence, approve, run to the end of the turn),
 * - duplicated items in the model's input after that restore.
 *
 * Run: pnpm bench:peers [--turns 500]   (from the repository root)
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { batonRunner } from './batonRunner.js';
import { langgraphRunner } from './langgraphRunner.js';
import { openaiAgentsRunner } from './openaiAgentsRunner.js';
import { customerText, duplicates, type PeerRunner } from './scenario.js';

const PEERS = {
  baton: () => batonRunner(versionOf('../../../packages/handoff/package.json')),
  'openai-agents': () => openaiAgentsRunner(versionOf('../node_modules/@openai/agents/package.json')),
  langgraph: () =>
    langgraphRunner(
      `${versionOf('../node_modules/@langchain/langgraph/package.json')} + swarm ${versionOf('../node_modules/@langchain/langgraph-swarm/package.json')}`,
    ),
} as const;
type Peer = keyof typeof PEERS;

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

function runChild(peer: Peer, turns: number): Promise<PeerResult> {
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

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { peer: { type: 'string' }, turns: { type: 'string', default: '500' } } });
  const turns = Number(values.turns);
  if (values.peer !== undefined) {
    // Warm-up on a conversation of its own (JIT, lazy imports): a few turns, a pause, a restore.
    await measure(await PEERS[values.peer as Peer](), 3);
    const result = await measure(await PEERS[values.peer as Peer](), turns);
    console.log(JSON.stringify(result));
    return;
  }
  console.log(
    `cores: ${availableParallelism()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}; instant fake models, in-memory persistence\n`,
  );
  const results: PeerResult[] = [];
  for (const peer of Object.keys(PEERS) as Peer[]) results.push(await runChild(peer, turns));
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

await main();
