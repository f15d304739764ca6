import { assertValidId, createId, InvalidIdError, isValidId } from '@baton/core';
import { parse, stringify, validate, version } from 'uuid';
import { describe, expect, it } from 'vitest';

describe('createId', () => {
  it('makes UUIDv7 ids that are unique and strictly increasing within a process', () => {
    const ids = Array.from({ length: 20_000 }, () => createId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i += 1) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("writes each id's bytes as the uuid package formats them (RFC 9562's canonical text, version 7)", () => {
    for (let i = 0; i < 2_000; i += 1) {
      const id = createId();
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      expect(stringify(parse(id))).toBe(id);
    }
  });

  it('encodes the creation time in its first 48 bits', () => {
    const before = Date.now();
    const id = createId();
    const msecs = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(Date.now() + 1);
  });
});

describe('id validation', () => {
  it.each(['chat-81', 'u:42', 'a.b', 'A_1', createId()])('accepts %s', (id) => {
    expect(isValidId(id)).toBe(true);
    expect(assertValidId('session', id)).toBe(id);
  });

  it.each(['', '.', '..', '../x', 'a/b', 'a\\b', '$gt', '-x', '.hidden', 'a..b', 'x'.repeat(129), 'a b'])(
    'rejects %j',
    (id) => {
      expect(isValidId(id)).toBe(false);
      expect(() => assertValidId('session', id)).toThrow(InvalidIdError);
    },
  );

  it('rejects values that are not strings, quoting them in the message', () => {
    expect(() => assertValidId('session', { $gt: '' })).toThrow(/Invalid session id \{"\$gt":""\}/);
  });
});
