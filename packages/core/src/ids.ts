import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { InvalidIdError } from './errors.js';

/** Random bytes drawn from the OS in blocks, 16 per id (one `randomFillSync` call per 256 ids, not one per id). */
const POOL = new Uint8Array(16 * 256);
let poolOffset = POOL.length;

/**
 * What `uuidv7` is called with, reused from id to id (it reads the options and returns a new string;
 * nothing keeps them): the last millisecond and counter used, as uuid's own stateful v7 keeps
 * them, and the id's 16 random bytes, copied out of the pool.
 */
const v7Options = { random: new Uint8Array(16), msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** Where `uuidv7` writes an id's 16 bytes, reused from id to id (they are formatted at once). */
const idBytes = new Uint8Array(16);

/** Character codes of the hex digits `0-9a-f`. */
const HEX_CODES: readonly number[] = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));

/**
 * The character codes of an id's text, reused from id to id: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`
 * (the dashes are set once; {@link formatId} writes the 32 hex digits around them).
 */
const idCodes: number[] = Array.from('00000000-0000-0000-0000-000000000000', (char) => char.charCodeAt(0));

/**
 * The canonical lowercase text of `idBytes` (RFC 9562 §4), built as one flat string from its
 * character codes: uuid's own formatting concatenates 20 pieces, one intermediate string each.
 */
function formatId(): string {
  let at = 0;
  for (let i = 0; i < 16; i += 1) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at += 1; // the dash already there
    const byte = idBytes[i]!;
    idCodes[at] = HEX_CODES[byte >> 4]!;
    idCodes[at + 1] = HEX_CODES[byte & 15]!;
    at += 2;
  }
  return String.fromCharCode.apply(null, idCodes);
}

/** Fills `v7Options.random` with the pool's next 16 bytes. */
function drawRandom(): Uint8Array {
  if (poolOffset >= POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const random = v7Options.random;
  for (let i = 0; i < 16; i += 1) random[i] = POOL[poolOffset + i]!;
  poolOffset += 16;
  return random;
}

/**
 * A new time-ordered id: a UUIDv7 (RFC 9562), so ids sort by creation time.
 *
 * @returns a 36-character lowercase UUID string
 * @example
 * ```ts
 * import { createId } from '@baton/core';
 * const id = createId(); // '019a8f4e-…'
 * ```
 */
export function createId(): string {
  const random = drawRandom();
  const now = Date.now();
  const clock = v7Options;
  if (now > clock.msecs) {
    // A new millisecond: the 31-bit counter starts at a random value (RFC 9562 §6.2, method 1).
    clock.msecs = now;
    clock.seq = (((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!) >>> 0;
  } else {
    // Same (or an earlier) millisecond: count up, so ids made in one process stay ordered.
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs += 1;
  }
  // uuid lays out the bytes (timestamp, version, counter, variant, random) into `idBytes`.
  uuidv7(v7Options, idBytes, 0);
  return formatId();
}

const ID_PATTERN = /^[A-Za-z0-9_:][A-Za-z0-9_:.-]{0,127}$/;

/**
 * Whether `value` is a safe id: 1–128 characters of letters, digits, `_ - : .`, not starting with
 * `.` or `-`. Such an id can be a folder name and a query value; it can never be a path (`../x`,
 * `a/b`) or a MongoDB operator (`$gt`).
 */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value) && value !== '.' && !value.includes('..');
}

/**
 * Returns `value` if it is a safe id (see {@link isValidId}).
 *
 * @param kind what the id names, for the message (`'session'`, `'branch'`, …)
 * @throws {InvalidIdError} when it is not
 * @example
 * ```ts
 * import { assertValidId } from '@baton/core';
 * assertValidId('session', '../../etc'); // throws InvalidIdError
 * ```
 */
export function assertValidId(kind: string, value: unknown): string {
  if (!isValidId(value)) throw new InvalidIdError(kind, value);
  return value;
}
