import type { Message, ToolCall } from '../conversation/message.js';

/** Marks a value {@link cloneData}'s fast path does not copy (the whole value then goes to `structuredClone`). */
const UNSUPPORTED: unique symbol = Symbol('unsupported');

/** Nesting deeper than this goes to `structuredClone` (which also handles cycles, the usual cause). */
const MAX_DEPTH = 100;

/**
 * A deep copy with `structuredClone`'s result, several times faster for plain data: JSON-shaped
 * values (plain objects, dense arrays, primitives) are copied directly; a value holding anything
 * else (a `Date`, a `Map`, a class instance, a sparse array, a cycle, a function, a `__proto__`
 * key, …) is handed whole to `structuredClone`, so it is copied (or refused) exactly as before.
 * The one difference: an object reached twice in a tree is copied twice (`structuredClone` keeps
 * one shared copy); a copy of plain data never shares anything with the original either way.
 *
 * @param value the value to copy
 * @returns a copy sharing no object with `value`
 * @throws {DOMException} `DataCloneError` when `structuredClone` cannot copy it (e.g. a function)
 */
export function cloneData<T>(value: T): T {
  if (typeof value !== 'object' || value === null)
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  const copy = copyPlain(value, 0);
  return copy === UNSUPPORTED ? structuredClone(value) : (copy as T);
}

function copyPlain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? UNSUPPORTED : value;
  if (value === null) return null;
  if (depth > MAX_DEPTH) return UNSUPPORTED;
  if (Array.isArray(value)) return copyArray(value, depth);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return UNSUPPORTED;
  const out: Record<string, unknown> = {};
  // for…in with hasOwn visits what Object.keys lists, in the same order, without allocating the list.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key === '__proto__') return UNSUPPORTED;
    const child = copyPlain((value as Record<string, unknown>)[key], depth + 1);
    if (child === UNSUPPORTED) return UNSUPPORTED;
    out[key] = child;
  }
  return out;
}

function copyArray(value: unknown[], depth: number): unknown {
  if (Object.getPrototypeOf(value) !== Array.prototype) return UNSUPPORTED;
  const length = value.length;
  const out: unknown[] = [];
  for (let i = 0; i < length; i += 1) {
    if (!(i in value)) return UNSUPPORTED;
    const child = copyPlain(value[i], depth + 1);
    if (child === UNSUPPORTED) return UNSUPPORTED;
    out.push(child);
  }
  // Named properties on an array (structuredClone copies them too).
  if (Object.keys(value).length !== length) return UNSUPPORTED;
  return out;
}

/** The keys of a message whose values are strings, numbers or booleans once validated. */
const FLAT_MESSAGE_KEYS: ReadonlySet<string> = new Set([
  'id',
  'seq',
  'role',
  'content',
  'agent',
  'toolCallId',
  'toolName',
  'isError',
  'durationMs',
  'createdAt',
]);

/**
 * Freezes `value` and every object and array inside it (`Object.freeze`, depth first), so that no
 * one holding a reference can change it: in strict-mode code (every ES module) an assignment then
 * throws a `TypeError`. Returns `value` itself.
 *
 * @param value plain data (what {@link cloneData} copies)
 * @returns `value`, deep-frozen
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  }
  return Object.freeze(value);
}

/**
 * `deepFreeze(cloneData(message))` for a validated message, in one pass, without a walk over its flat fields:
 * a validated message's fields are strings, numbers and booleans except `toolCalls` (flat
 * `{ id, name, arguments }` objects: copied one level and frozen, with their array) and `metadata`
 * (free-form JSON, copied with {@link cloneData} and frozen with {@link deepFreeze}). A message with
 * any other key (zod lets unknown keys through) is copied and frozen whole. What a store keeps of a
 * message it must protect from its callers (`InMemoryStore`).
 *
 * @param message a message that passed `MessageSchema`
 * @returns a deep-frozen copy sharing no object with `message`
 */
export function frozenMessageCopy(message: Message): Message {
  for (const key in message) {
    if (!FLAT_MESSAGE_KEYS.has(key) && key !== 'toolCalls' && key !== 'metadata') return deepFreeze(cloneData(message));
  }
  if (Object.getPrototypeOf(message) !== Object.prototype) return deepFreeze(cloneData(message));
  const copy: Message = Object.assign({}, message);
  if (message.toolCalls !== undefined)
    copy.toolCalls = Object.freeze(message.toolCalls.map(frozenToolCall)) as ToolCall[];
  if (message.metadata !== undefined) copy.metadata = deepFreeze(cloneData(message.metadata));
  return Object.freeze(copy);
}

/**
 * Freezes validated messages in place, as {@link deepFreeze} would, without walking their flat
 * fields (see {@link frozenMessageCopy}: only `toolCalls` and `metadata` are nested; a message or
 * tool call with any other key is frozen whole with {@link deepFreeze}), and the array holding them.
 * For messages no one else holds yet (just parsed from a store's own bytes).
 *
 * @param messages messages that passed `MessageSchema`
 * @returns `messages`, frozen with every message and everything inside them
 */
export function freezeMessages(messages: Message[]): readonly Message[] {
  for (const message of messages) freezeMessage(message);
  return Object.freeze(messages);
}

function freezeMessage(message: Message): void {
  if (Object.isFrozen(message)) return;
  for (const key in message) {
    if (!FLAT_MESSAGE_KEYS.has(key) && key !== 'toolCalls' && key !== 'metadata') {
      deepFreeze(message);
      return;
    }
  }
  const calls = message.toolCalls;
  if (calls !== undefined) {
    for (const call of calls) freezeToolCall(call);
    Object.freeze(calls);
  }
  if (message.metadata !== undefined) deepFreeze(message.metadata);
  Object.freeze(message);
}

function freezeToolCall(call: ToolCall): void {
  for (const key in call) {
    if (key !== 'id' && key !== 'name' && key !== 'arguments') {
      deepFreeze(call);
      return;
    }
  }
  Object.freeze(call);
}

function frozenToolCall(call: ToolCall): ToolCall {
  for (const key in call) if (key !== 'id' && key !== 'name' && key !== 'arguments') return deepFreeze(cloneData(call));
  return Object.freeze(Object.assign({}, call));
}
