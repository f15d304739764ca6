/** The messages the scale-out driver and its worker processes exchange over the IPC channel. */

/** Driver → worker. */
export type ToWorker =
  /** Serve one customer turn of `sessionId`. */
  | { kind: 'turn'; id: number; sessionId: string; text: string }
  /** Zero the command counters (after warm-up). */
  | { kind: 'reset' }
  /** Report the command counters. */
  | { kind: 'stats' }
  /** Close the store and exit. */
  | { kind: 'exit' };

/** Worker → driver. */
export type FromWorker =
  | { kind: 'ready'; pid: number }
  | { kind: 'turn'; id: number; error?: string }
  /**
   * Since the last reset: the round trips of the worker's MongoClient (connection check-outs, one per
   * command), the commands by name (only with command monitoring on, else empty) and the turns it served.
   */
  | { kind: 'stats'; roundTrips: number; commands: Record<string, number>; turns: number };
