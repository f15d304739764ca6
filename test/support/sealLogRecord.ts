import CRC32C from 'crc-32/crc32c.js';

/**
 * A FileStore session log record (format 3) sealed as the store seals it: the object's JSON with
 * `"crc32c"` (the CRC-32C of the bytes before `,"crc32c":"`, 8 hex digits) as its last member.
 * Tests that edit a log by hand seal the lines they rewrite, so what the store meets is the edited
 * content (a damaged document inside a whole record), not a damaged record.
 *
 * @param json `JSON.stringify` of an object without a `crc32c` member
 * @example sealLogRecord(JSON.stringify({ ops })) // '{"ops":[…],"crc32c":"…"}'
 */
export function sealLogRecord(json: string): string {
  const body = json.slice(0, -1);
  return `${body},"crc32c":"${(CRC32C.str(body) >>> 0).toString(16).padStart(8, '0')}"}`;
}
