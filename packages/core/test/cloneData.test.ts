import { describe, expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import { cloneData, frozenMessageCopy } from '../src/store/cloneData.js';

describe('cloneData', () => {
  it('copies plain data deeply: equal to the original, sharing no object with it', () => {
    const original = {
      id: 'm-1',
      seq: 3,
      toolCalls: [{ id: 'c1', name: 'look_up', arguments: '{}' }],
      metadata: { tags: ['a', 'b'], nested: { deep: [1, { x: null }] }, flag: false, missing: undefined },
    };
    const copy = cloneData(original);
    expect(copy).toStrictEqual(original);
    expect(copy).not.toBe(original);
    expect(copy.toolCalls).not.toBe(original.toolCalls);
    expect(copy.toolCalls[0]).not.toBe(original.toolCalls[0]);
    expect(copy.metadata.tags).not.toBe(original.metadata.tags);
    expect(copy.metadata.nested.deep[1]).not.toBe(original.metadata.nested.deep[1]);
    expect(Object.keys(copy.metadata)).toEqual(['tags', 'nested', 'flag', 'missing']);
    original.metadata.tags.push('changed');
    expect(copy.metadata.tags).toEqual(['a', 'b']);
  });

  it('keeps numbers structuredClone keeps (-0, NaN, Infinity) and returns primitives as they are', () => {
    const copy = cloneData({ zero: -0, nan: Number.NaN, inf: Number.POSITIVE_INFINITY, big: 10n });
    expect(Object.is(copy.zero, -0)).toBe(true);
    expect(copy.nan).toBeNaN();
    expect(copy.inf).toBe(Number.POSITIVE_INFINITY);
    expect(copy.big).toBe(10n);
    expect(cloneData('text')).toBe('text');
    expect(cloneData(null)).toBeNull();
  });

  it('copies values holding non-plain objects exactly as structuredClone does', () => {
    const when = new Date('2026-01-02T03:04:05.000Z');
    const copy = cloneData({ when, map: new Map([['k', { v: 1 }]]), list: [new Set([1])] });
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.toISOString()).toBe(when.toISOString());
    expect(copy.map).toBeInstanceOf(Map);
    expect(copy.map.get('k')).toEqual({ v: 1 });
    expect(copy.list[0]).toBeInstanceOf(Set);
  });

  it('copies class instances as structuredClone does (own fields, plain object)', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const copy = cloneData({ at: new Point(1, 2) });
    expect(copy.at).toStrictEqual(structuredClone({ at: new Point(1, 2) }).at);
    expect(copy.at).not.toBeInstanceOf(Point);
  });

  it('keeps a cycle (through structuredClone) instead of recursing forever', () => {
    const node: { name: string; self?: unknown } = { name: 'loop' };
    node.self = node;
    const copy = cloneData(node);
    expect(copy.self).toBe(copy);
    expect(copy).not.toBe(node);
  });

  it('copies an own __proto__ key as a key, never as the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const copy = cloneData(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'ok']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('keeps the holes of sparse arrays and the named properties of arrays, as structuredClone does', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    const sparse = [1, , 3];
    const copy = cloneData({ sparse });
    expect(1 in copy.sparse).toBe(false);
    expect(copy.sparse).toHaveLength(3);
    const named = Object.assign([1, 2], { label: 'two' });
    expect((cloneData(named) as unknown as { label: string }).label).toBe('two');
  });

  it('copies a null-prototype object into a plain object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    const copy = cloneData(bare);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy).toEqual({ a: 1 });
  });

  it('refuses what structuredClone refuses (a function) with the same DataCloneError', () => {
    expect(() => cloneData({ run: () => 1 })).toThrow(expect.objectContaining({ name: 'DataCloneError' }));
    expect(() => cloneData(() => 1)).toThrow(expect.objectContaining({ name: 'DataCloneError' }));
  });
});

describe('frozenMessageCopy', () => {
  const message: Message = {
    id: 'm-1',
    seq: 1,
    role: 'assistant',
    content: '',
    agent: 'billing',
    toolCalls: [{ id: 'call-1', name: 'refund', arguments: '{"orderId":"1234"}' }],
    createdAt: '2026-01-01T00:00:00.000Z',
    metadata: { handoff: { to: 'billing', tags: ['a', 'b'] } },
  };

  it('gives what cloneData gives, sharing no object with the message', () => {
    const copy = frozenMessageCopy(message);
    expect(copy).toEqual(cloneData(message));
    expect(copy).not.toBe(message);
    expect(copy.toolCalls).not.toBe(message.toolCalls);
    expect(copy.toolCalls![0]).not.toBe(message.toolCalls![0]);
    expect(copy.metadata).not.toBe(message.metadata);
    expect((copy.metadata!.handoff as { tags: string[] }).tags).not.toBe(
      (message.metadata!.handoff as { tags: string[] }).tags,
    );
  });

  it('freezes the copy all the way down and leaves the message as it was', () => {
    const copy = frozenMessageCopy(message);
    for (const part of [
      copy,
      copy.toolCalls,
      copy.toolCalls![0],
      copy.metadata,
      copy.metadata!.handoff,
      (copy.metadata!.handoff as { tags: string[] }).tags,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => {
      copy.toolCalls![0]!.arguments = '{}';
    }).toThrow(TypeError);
    expect(Object.isFrozen(message) || Object.isFrozen(message.toolCalls) || Object.isFrozen(message.metadata)).toBe(
      false,
    );
  });

  it('keeps a message without tool calls or metadata without them', () => {
    const plain: Message = { id: 'm-2', seq: 2, role: 'user', content: 'hi', createdAt: '2026-01-01T00:00:00.000Z' };
    expect(Object.keys(frozenMessageCopy(plain)).sort()).toEqual(Object.keys(plain).sort());
  });

  it('copies keys the schema does not name deeply too (a message with them is copied as cloneData copies it)', () => {
    const extra = {
      ...message,
      vendor: { trace: ['x'] },
      toolCalls: [{ id: 'c', name: 'n', arguments: '{}', raw: { a: [1] } }],
    } as unknown as Message;
    const copy = frozenMessageCopy(extra) as Message & { vendor: { trace: string[] } };
    expect(JSON.stringify(copy)).toBe(JSON.stringify(extra));
    expect(copy.vendor.trace).not.toBe((extra as Message & { vendor: { trace: string[] } }).vendor.trace);
    const onlyCallExtra = {
      ...message,
      toolCalls: [{ id: 'c', name: 'n', arguments: '{}', raw: { a: [1] } }],
    } as unknown as Message;
    const callCopy = frozenMessageCopy(onlyCallExtra).toolCalls![0] as unknown as { raw: { a: number[] } };
    expect(callCopy.raw).toEqual({ a: [1] });
    expect(callCopy.raw).not.toBe((onlyCallExtra.toolCalls![0] as unknown as { raw: object }).raw);
    expect(Object.isFrozen(copy.vendor.trace) && Object.isFrozen(callCopy.raw.a)).toBe(true);
  });
});
