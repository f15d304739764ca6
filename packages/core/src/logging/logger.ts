/**
 * One log method in pino's shape: a record of fields first, then the message (`logger.warn({ sessionId }, 'slow store call')`).
 * pino, and any logger with the same call shape, fits.
 */
export type LogFn = (fields: Record<string, unknown>, message: string) => void;

/**
 * What Baton logs through: any object with pino's `debug`/`info`/`warn`/`error` methods (a pino
 * logger or a child of one fits as it is). Baton logs what an operator needs: recoveries,
 * concurrency losses, pruning, slow store calls and failed turns; it never logs message contents.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * import { HandoffBuilder } from '@baton/handoff';
 * const desk = new HandoffBuilder({ name: 'support-desk' }).participants(triage).logger(pino()).build();
 * ```
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const ignore: LogFn = () => undefined;

/** A {@link Logger} that drops everything: the default wherever a logger is optional. */
export const silentLogger: Logger = Object.freeze({ debug: ignore, info: ignore, warn: ignore, error: ignore });
