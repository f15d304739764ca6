import { NEVER_ABORTED, type Request, type TurnSettings } from '@baton/core';
import type { RequestAnswer, TurnOptions } from '../config/handoffTypes.js';

/** How a turn starts: user messages (usually one), an answer to a pending request, or the resumption of an interrupted turn. */
export type TurnStart =
  | { kind: 'message'; texts: readonly string[]; metadata?: Record<string, unknown> }
  | { kind: 'answer'; request: Request; answer: RequestAnswer }
  | { kind: 'resume' };

/** What one call that runs a turn brings: its cancellation signal and the caller's settings for this turn only. */
export interface TurnCall {
  signal: AbortSignal;
  settings?: TurnSettings;
}

/** The signal and the per-turn settings of a call's options. */
export function turnCall(options: TurnOptions): TurnCall {
  const call: TurnCall = { signal: options.signal ?? NEVER_ABORTED };
  if (options.instructions !== undefined || options.modelSettings !== undefined || options.tools !== undefined) {
    const { signal: _signal, ...settings } = options;
    call.settings = settings;
  }
  return call;
}
