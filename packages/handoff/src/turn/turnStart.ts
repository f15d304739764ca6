import type { Request, TurnSettings } from '@baton/core';
import type { RequestAnswer } from '../config/handoffTypes.js';

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
