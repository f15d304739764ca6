import { compareLogPositions, type EventLogPosition } from '@baton/core';
import type { LogItem } from './branchLog.js';
import type { EventPosition } from './eventId.js';
import type { EventQueue } from './eventQueue.js';
import { loggedOf, runsSomewhere, type StoreTailSource } from './storeTail.js';

/** One reader of a branch's store log: where it is, and whether it stays for later turns. */
interface Follower {
  queue: EventQueue<LogItem>;
  last: EventLogPosition;
  follow: boolean;
  /** `run.ended` was pushed and nothing came since. */
  ended: boolean;
}

/** The poller of one branch and its followers. */
interface Poller {
  source: StoreTailSource;
  followers: Set<Follower>;
}

/**
 * Followers of branches' event logs in the store (FerretDB has no change streams, so by polling
 * every `pollMs`): each poll reads the entries after a follower's last one; when a poll finds
 * nothing new for it and no process holds the branch's lease, its run ended (`run.ended` is pushed;
 * with `follow` it stays for later turns). One poller per branch: however many clients of this process follow a branch, each interval
 * costs one lease read and one log read (from the position of the follower furthest behind), and
 * each follower is given the entries after its own position. A branch's poller stops when its last
 * follower leaves.
 *
 * @example
 * ```ts
 * const tails = new StoreTails();
 * tails.add('acme\u0000chat-1\u0000main', source, queue, after, false);
 * ```
 */
export class StoreTails {
  readonly #pollers = new Map<string, Poller>();

  /** How many branches are polled now. */
  get polling(): number {
    return this.#pollers.size;
  }

  /** Follows `source` into `queue` from after `after` (with `follow`, on through later turns), under `key` (tenant, session, branch). */
  add(key: string, source: StoreTailSource, queue: EventQueue<LogItem>, after: EventPosition, follow: boolean): void {
    const follower: Follower = {
      queue,
      last: { epoch: after.epoch ?? 0, seq: after.seq, index: after.index },
      follow,
      ended: false,
    };
    const poller = this.#pollers.get(key);
    if (poller !== undefined) {
      poller.followers.add(follower);
      return;
    }
    const started: Poller = { source, followers: new Set([follower]) };
    this.#pollers.set(key, started);
    void this.#poll(key, started);
  }

  async #poll(key: string, poller: Poller): Promise<void> {
    const { source, followers } = poller;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, source.pollMs));
      for (const follower of followers) if (follower.queue.ended) followers.delete(follower);
      if (followers.size === 0) {
        this.#pollers.delete(key); // in the same tick as the check: a follower added later starts a new poller
        return;
      }
      try {
        // The lease is read before the log: a run that ended before the lease read has all its events in the log read after it.
        const running = await runsSomewhere(source);
        const from = [...followers].map((f) => f.last).reduce((a, b) => (compareLogPositions(a, b) <= 0 ? a : b));
        const { entries } = await source.eventLog.readEvents(source.sessionId, source.branchId, {
          after: from,
          ...source.scope,
        });
        for (const follower of followers) {
          const news = entries.filter((entry) => compareLogPositions(entry.position, follower.last) > 0);
          for (const entry of news)
            follower.queue.push({ kind: 'event', logged: loggedOf(source.sessionId, source.branchId, entry) });
          follower.last = news.at(-1)?.position ?? follower.last;
          if (news.length > 0) follower.ended = false;
          if (!running && news.length === 0 && !follower.ended) {
            follower.ended = true;
            follower.queue.push({ kind: 'run.ended' });
            if (!follower.follow) followers.delete(follower);
          }
        }
      } catch {
        // A failed poll (the store unreachable for a moment) is retried at the next interval.
      }
    }
  }
}
