/**
 * The load both runners of temporalScaleBench.ts serve: `sessions` customers at once, each sending
 * a warm-up turn (not timed: it starts the session's workflow, opens the session, compiles the
 * workers' code), then `turns` timed turns one after the other, each sent once the last was answered
 * (test/bench/scale's customers). Returns what the check and the table need.
 */

/** Sends one customer turn and resolves once it is committed (rejects when it failed). */
export type SendTurn = (sessionId: string, text: string) => Promise<void>;

/** What the timed turns did. */
export interface LoadResult {
  /** Seconds from the first timed turn sent to the last answered. */
  seconds: number;
  /** Latency of each answered timed turn as the customer saw it (queueing included), in ms. */
  latencies: number[];
  /** Per session: the texts sent in order (warm-up first) and the indexes of turns that failed. */
  sent: Map<string, { texts: string[]; failed: Set<number> }>;
  failedTurns: number;
  firstError?: string;
}

/** The text of a session's turn `t` (turn 0 is the warm-up). */
export const turnText = (session: number, t: number): string => `session ${session} turn ${t}`;

/**
 * Runs the load: warm-up turns, then `onTimed()` (to zero counters), then the timed turns.
 * @param prefix session ids are `<prefix>-s<n>` (unique per configuration)
 */
export async function runSessions(options: {
  prefix: string;
  sessions: number;
  turns: number;
  send: SendTurn;
  onTimed: () => void;
}): Promise<LoadResult> {
  const { prefix, sessions, turns, send } = options;
  const sent = new Map<string, { texts: string[]; failed: Set<number> }>();
  let failedTurns = 0;
  let firstError: string | undefined;
  const attempt = async (sessionId: string, t: number, text: string): Promise<boolean> => {
    const entry = sent.get(sessionId)!;
    entry.texts.push(text);
    try {
      await send(sessionId, text);
      return true;
    } catch (error) {
      entry.failed.add(t);
      failedTurns += 1;
      firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return false;
    }
  };
  const ids = Array.from({ length: sessions }, (_, s) => `${prefix}-s${s}`);
  for (const id of ids) sent.set(id, { texts: [], failed: new Set() });
  await Promise.all(ids.map((id, s) => attempt(id, 0, turnText(s, 0))));
  options.onTimed();
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    ids.map(async (id, s) => {
      for (let t = 1; t <= turns; t += 1) {
        const at = performance.now();
        if (await attempt(id, t, turnText(s, t))) latencies.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { seconds, latencies, sent, failedTurns, ...(firstError === undefined ? {} : { firstError }) };
}

/** The `p`th percentile (0–100) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
