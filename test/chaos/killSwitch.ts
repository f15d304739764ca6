/**
 * Kill points: every place a chaos child can stop (an event yielded, before and after each store
 * call, a tool's start and end, a model call) calls {@link KillSwitch.point}. The switch numbers
 * them from 1; when the number reaches `killAt` the process SIGKILLs itself. With a delay seed it
 * also sleeps a few milliseconds at some points, to shake timings.
 */
import { appendFileSync } from 'node:fs';

/** Options of {@link KillSwitch}. */
export interface KillSwitchOptions {
  /** The point to die at (1-based); 0 or less: never. */
  killAt: number;
  /** When set, the label of every point is appended to this file (one per line), for reports. */
  labelsFile?: string | undefined;
  /** When set, some points sleep 0–4 ms, chosen by a PRNG seeded with it. */
  delaySeed?: number | undefined;
}

/**
 * Counts kill points and dies at the chosen one.
 *
 * @example
 * ```ts
 * const kill = new KillSwitch({ killAt: Number(process.env.CHAOS_KILL_AT ?? 0) });
 * await kill.point('store.appendMessages:before');
 * ```
 */
export class KillSwitch {
  /** Points passed so far. */
  count = 0;
  readonly #options: KillSwitchOptions;
  readonly #random: (() => number) | undefined;

  constructor(options: KillSwitchOptions) {
    this.#options = options;
    this.#random = options.delaySeed === undefined ? undefined : mulberry32(options.delaySeed);
  }

  /** Passes one kill point: records its label, maybe sleeps, and SIGKILLs the process when it is the chosen one. */
  async point(label: string): Promise<void> {
    this.count += 1;
    if (this.#options.labelsFile !== undefined) appendFileSync(this.#options.labelsFile, `${label}\n`);
    if (this.count === this.#options.killAt) process.kill(process.pid, 'SIGKILL');
    if (this.#random !== undefined && this.#random() < 0.08) {
      const ms = Math.floor(this.#random() * 5);
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }
}

/**
 * A small seeded PRNG (mulberry32): the same seed gives the same numbers in [0, 1).
 * @example
 * ```ts
 * const random = mulberry32(42);
 * random(); // 0.6011…
 * ```
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
