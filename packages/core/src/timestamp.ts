import { z } from 'zod';

/**
 * An ISO-8601 UTC timestamp as `Date.prototype.toISOString()` writes it: `YYYY-MM-DDTHH:mm:ss`,
 * optional fractional seconds, then `Z`. Calendar dates only (no 2025-02-30; 02-29 in leap years).
 * Stores compare timestamps as strings, which orders them correctly only in this one form.
 */
const ISO_TIMESTAMP =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8])))T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z$/;

/**
 * Whether `value` is an ISO-8601 UTC timestamp such as `'2025-01-01T00:00:00.000Z'` (what
 * `new Date().toISOString()` and `isoNow()` return). Offsets (`+02:00`), spaces, dates without a
 * time and impossible dates (`2025-02-30`) are not.
 *
 * @param value anything
 * @returns `true` for a timestamp every store may store and compare as a string
 * @example
 * ```ts
 * import { isIsoTimestamp } from '@baton/core';
 * isIsoTimestamp('2025-01-01T00:00:00.000Z'); // true
 * isIsoTimestamp('yesterday'); // false
 * ```
 */
export function isIsoTimestamp(value: unknown): value is string {
  return typeof value === 'string' && ISO_TIMESTAMP.test(value);
}

/**
 * The zod schema of a stored timestamp (see {@link isIsoTimestamp}); every `createdAt`,
 * `lastActivityAt`, `closedAt`, `startedAt` and `endedAt` of a persisted document uses it, on write
 * and on read.
 *
 * @example
 * ```ts
 * import { IsoTimestampSchema } from '@baton/core';
 * IsoTimestampSchema.parse('2025-01-01T00:00:00.000Z');
 * ```
 */
export const IsoTimestampSchema = z
  .string()
  .regex(ISO_TIMESTAMP, 'must be an ISO-8601 UTC timestamp such as "2025-01-01T00:00:00.000Z"');
