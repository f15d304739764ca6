/**
 * The records of a `FileStore` session log (format version 3): each line is one JSON object whose
 * last member is its checksum, `…,"crc32c":"<8 hex digits>"}`, the CRC-32C (Castagnoli, as
 * write-ahead logs carry; the `crc-32` package) of the line's bytes before `,"crc32c":"`. A line
 * stays plain JSON (`jq` reads it), and any damage to a record — a flipped bit, a lost or added
 * newline merging or splitting records — is found exactly, before the record is parsed.
 *
 * Version 2 lines have no checksum: they are still read (checked as JSON only), and a version 2
 * log may hold sealed lines appended by this code, which are checked.
 */
import CRC32C from 'crc-32/crc32c.js';

/** `,"crc32c":"` — what comes between a record's body and its checksum. */
const SEAL_KEY = ',"crc32c":"';
/** The bytes a seal adds after a record's body: `,"crc32c":"` + 8 hex digits + `"}`. */
export const SEAL_BYTES = SEAL_KEY.length + 8 + 2;

/** The CRC-32C of `bytes` (an unsigned 32-bit integer). */
export function crc32c(bytes: Uint8Array): number {
  return CRC32C.buf(bytes) >>> 0;
}

/** The CRC-32C of a string's UTF-8 bytes. */
function crc32cOf(text: string): number {
  return CRC32C.str(text) >>> 0;
}

/**
 * Seals the JSON of an object as a record: the object with `"crc32c"` as its last member.
 * @param json `JSON.stringify` of an object (ends with `}`), without a newline
 * @returns the record, without its newline
 * @example sealRecord('{"ops":[]}') // '{"ops":[],"crc32c":"…"}'
 */
export function sealRecord(json: string): string {
  const body = json.slice(0, -1);
  return `${body}${SEAL_KEY}${crc32cOf(body).toString(16).padStart(8, '0')}"}`;
}

/** {@link SEAL_KEY} as bytes. */
const SEAL_KEY_BYTES = Buffer.from(SEAL_KEY, 'latin1');
/** The ASCII codes of the hex digits, by value. */
const HEX_CODES = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Seals a record in place, as {@link sealRecord} seals its JSON: `bytes` hold the record's body
 * (its JSON without the closing `}`) in `[0, bodyEnd)` and have room after it for the seal and a
 * newline ({@link SEAL_BYTES} + 1 bytes), which are written there. The bytes are the UTF-8 of
 * `sealRecord(json) + '\n'`, with the checksum taken over the encoded bytes (no second encoding).
 * @returns the end of the record, its newline included
 */
export function sealRecordBytes(bytes: Buffer, bodyEnd: number): number {
  const crc = crc32c(bytes.subarray(0, bodyEnd));
  let at = bodyEnd + SEAL_KEY_BYTES.copy(bytes, bodyEnd);
  for (let shift = 28; shift >= 0; shift -= 4) bytes[at++] = HEX_CODES[(crc >>> shift) & 0xf]!;
  bytes[at++] = 0x22; // "
  bytes[at++] = 0x7d; // }
  bytes[at++] = 0x0a; // newline
  return at;
}

/** What {@link checkRecord} finds in a line. */
export type RecordCheck =
  /** A seal whose checksum matches: `body` is how many bytes of the line it covers. */
  | { kind: 'sealed'; body: number }
  /** No seal (a version 2 line, or damage that took the seal away). */
  | { kind: 'unsealed' }
  /** A seal whose checksum does not match the bytes. */
  | { kind: 'mismatch'; stored: number; actual: number };

const HEX = /^[0-9a-f]{8}$/;

/**
 * Checks the seal of one line.
 * @param bytes the buffer holding the line; `start`/`end` the line's bytes, newline excluded
 */
export function checkRecord(bytes: Buffer, start: number, end: number): RecordCheck {
  const length = end - start;
  if (length < SEAL_BYTES + 2) return { kind: 'unsealed' };
  const body = length - SEAL_BYTES;
  if (
    bytes[end - 1] !== 0x7d ||
    bytes[end - 2] !== 0x22 ||
    bytes.toString('latin1', start + body, start + body + SEAL_KEY.length) !== SEAL_KEY
  )
    return { kind: 'unsealed' };
  const hex = bytes.toString('latin1', end - 10, end - 2);
  if (!HEX.test(hex)) return { kind: 'unsealed' };
  const stored = Number.parseInt(hex, 16);
  const actual = crc32c(bytes.subarray(start, start + body));
  return stored === actual ? { kind: 'sealed', body } : { kind: 'mismatch', stored, actual };
}
