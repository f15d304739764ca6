/**
 * A FileStore log line is encoded straight into its buffer, its checksum taken over those bytes
 * (`encodeLine`): its bytes must be exactly those of `JSON.stringify({ ops })` sealed as the record
 * format says (the CRC-32C of the UTF-8 text, computed here with the package's string CRC), for
 * any text — non-ASCII, astral, lone surrogates, control characters — so that processes of older and
 * newer versions write and read the same log.
 */
import CRC32C from 'crc-32/crc32c.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeLine, type LogOp } from '../src/store/file/log/logOps.js';

/** The record format's seal, written out: the CRC-32C of the UTF-8 of the text before `,"crc32c":"`. */
function sealed(json: string): string {
  const body = json.slice(0, -1);
  return `${body},"crc32c":"${(CRC32C.str(body) >>> 0).toString(16).padStart(8, '0')}"}`;
}

/** Text of any UTF-16 code units (lone surrogates included), and some fixed hard cases. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 40 }),
  fc.constantFrom('', 'é', '日本語', '😀', '\ud800', '\udc00x', '\u2028\u2029', '\u0000\u001f"\\', 'a'.repeat(300)),
);

const opArbitrary: fc.Arbitrary<LogOp> = fc.oneof(
  fc.record({
    op: fc.constant('messages' as const),
    branchId: text,
    messages: fc.array(fc.record({ seq: fc.nat(), role: fc.constant('user'), content: text, id: text }), {
      maxLength: 4,
    }),
  }) as fc.Arbitrary<LogOp>,
  fc.record({
    op: fc.constant('checkpoint' as const),
    branchId: text,
    id: text,
    checkpoint: fc.jsonValue({ maxDepth: 3 }),
  }) as fc.Arbitrary<LogOp>,
  fc.record({ op: fc.constant('deleteBranches' as const), ids: fc.array(text, { maxLength: 3 }) }),
);

describe('FileStore: a log line as encoded', () => {
  it('is the sealed JSON of its operations, byte for byte, with each operation where its span says', () => {
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 5 }), (ops) => {
        const { bytes, spans, parts } = encodeLine(ops);
        const expected = Buffer.from(`${sealed(JSON.stringify({ ops }))}\n`, 'utf8');
        expect(bytes.equals(expected)).toBe(true);
        expect(parts).toEqual(ops.map((op) => JSON.stringify(op)));
        spans.forEach((span, i) => {
          expect(bytes.toString('utf8', span.offset, span.offset + span.length)).toBe(parts[i]);
        });
      }),
      { numRuns: 1000 },
    );
  });
});
