/**
 * The `cpu` phase of bench:peers: CPU per turn of every framework at one history length, in rounds that
 * alternate between the frameworks' child processes (forward, then backward), so that the ratio of two
 * frameworks' figures is measured under the same load, which separate runs on a shared machine are not.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { customerText, type PeerRunner } from './scenario.js';

/** What a child reports for one round. */
interface RoundReply {
  name: string;
  /** µs of the child's process CPU (user + system) per turn in this round. */
  cpuUs: number;
}

/** One framework's rounds. */
export interface CpuRounds {
  name: string;
  cpuUs: number[];
}

/**
 * Child side: builds `conversations` conversations to `history` turns, says it is ready, then runs one
 * turn on each conversation per `round` message and replies with the CPU per turn.
 */
export async function serveRounds(
  runner: () => Promise<PeerRunner>,
  conversations: number,
  history: number,
): Promise<void> {
  process.once('disconnect', () => process.exit(0));
  const warm = await runner();
  for (let n = 1; n <= 3; n += 1) await warm.turn(customerText(n));
  const runners: PeerRunner[] = [];
  for (let c = 0; c < conversations; c += 1) {
    const r = await runner();
    for (let n = 1; n <= history; n += 1) await r.turn(customerText(n));
    runners.push(r);
  }
  let next = history + 1;
  // A parent that is gone (killed, or failed on another child) ends this child: no error for a closed channel.
  const send = (message: unknown) => process.send?.(message, undefined, {}, () => undefined);
  process.on('message', async () => {
    const text = customerText(next);
    next += 1;
    const start = process.cpuUsage();
    for (const r of runners) await r.turn(text);
    const used = process.cpuUsage(start);
    send({ name: runners[0]?.name ?? '', cpuUs: (used.user + used.system) / runners.length } satisfies RoundReply);
  });
  send({ name: runners[0]?.name ?? '', cpuUs: 0 } satisfies RoundReply);
}

function reply(child: ChildProcess, peer: string): Promise<RoundReply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${peer} exited with ${code} during the cpu phase`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as RoundReply);
    });
  });
}

/**
 * Parent side: starts one child per peer (`script --peer <peer> --serve`), waits until all have built their
 * conversations, then runs five warm-up rounds and `rounds` counted ones, each asking every child in turn
 * for one round (forward on even rounds, backward on odd ones).
 */
export async function alternateRounds(
  script: string,
  peers: readonly string[],
  history: number,
  rounds: number,
): Promise<Map<string, CpuRounds>> {
  const children = new Map<string, ChildProcess>();
  for (const peer of peers) {
    const child = fork(script, ['--peer', peer, '--serve', '--history', String(history)], {
      execArgv: ['--import', 'tsx', '--conditions=source'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.set(peer, child);
  }
  const results = new Map<string, CpuRounds>();
  try {
    await Promise.all(
      peers.map(async (peer) => {
        const ready = await reply(children.get(peer)!, peer);
        results.set(peer, { name: ready.name, cpuUs: [] });
      }),
    );
    // Five warm-up rounds (JIT, garbage collection after the build), then the counted ones.
    for (let round = -5; round < rounds; round += 1) {
      const order = round % 2 === 0 ? peers : [...peers].reverse();
      for (const peer of order) {
        const child = children.get(peer)!;
        const answer = reply(child, peer);
        child.send('round');
        const { cpuUs } = await answer;
        if (round >= 0) results.get(peer)!.cpuUs.push(cpuUs);
      }
    }
  } finally {
    // Closing the channel ends a child (its 'disconnect' handler), and lets this process exit.
    for (const child of children.values()) if (child.connected) child.disconnect();
  }
  return results;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const us = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(1)} ms` : `${value.toFixed(0)} µs`);

/** Prints one row per framework: median CPU per turn, spread, and the ratio to the reference's rounds. */
export function printCpuTable(results: Map<string, CpuRounds>, reference: string): void {
  const base = results.get(reference);
  if (base === undefined) throw new Error(`the cpu phase needs the reference ${reference}`);
  console.log(
    '| framework | CPU per turn (median of rounds) | lowest–highest round | × Baton (median of rounds; lowest) |',
  );
  console.log('|---|---|---|---|');
  for (const [peer, { name, cpuUs }] of results) {
    const ratios = cpuUs.map((value, i) => value / base.cpuUs[i]!);
    const ratio =
      peer === reference ? 'reference' : `${median(ratios).toFixed(0)}× (${Math.min(...ratios).toFixed(0)}×)`;
    console.log(`| ${name} | ${us(median(cpuUs))} | ${us(Math.min(...cpuUs))}–${us(Math.max(...cpuUs))} | ${ratio} |`);
  }
  console.log(
    `\n${base.cpuUs.length} rounds each; ${reference}'s rounds: ${base.cpuUs.map((v) => v.toFixed(0)).join(', ')} µs`,
  );
}
