import { describe, expect, it } from 'vitest';
import { InMemoryStore, InvalidInputError, type Message, MessageSchema } from '../src/index.js';
import { fastAcceptsMessage } from '../src/store/messageFastCheck.js';

const full: Message = {
  id: 'm-1',
  seq: 4,
  role: 'tool',
  content: 'Transferred to billing.',
  agent: 'triage',
  toolCalls: [{ id: 'c1', name: 'look_up', arguments: '{}' }],
  toolCallId: 'c1',
  toolName: 'look_up',
  isError: false,
  durationMs: 0.25,
  createdAt: '2026-01-01T00:00:00.000Z',
  metadata: { control: { kind: 'handoff', target: 'billing' } },
};

/** Values to try in each field: valid ones, edge cases and wrong types. */
const samples: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  'x',
  0,
  -0,
  -1,
  1,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  'user',
  'robot',
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00.000+02:00',
  '2026-01-01 00:00:00Z',
  '2026-02-30T00:00:00Z',
  'now',
  [],
  [{ id: 'c', name: 'n', arguments: '' }],
  [{ id: '', name: 'n', arguments: '' }],
  [{ id: 'c', name: '', arguments: '' }],
  [{ id: 'c', name: 'n' }],
  [{ id: 'c', name: 'n', arguments: 1 }],
  [null],
  [[]],
  {},
  { a: 1 },
  { constructor: 'x' },
  Object.create(null),
  { [Symbol('s')]: 1 },
  new Date(0),
  new Map(),
];

function accepts(value: unknown): boolean {
  return MessageSchema.safeParse(value).success;
}

describe('fastAcceptsMessage', () => {
  it('accepts the messages a runtime commits (so the store skips zod for them)', () => {
    const { metadata: _m, toolCalls: _t, ...plainTool } = full;
    const messages: unknown[] = [
      full,
      plainTool,
      { id: 'm-2', seq: 1, role: 'user', content: 'Hi', createdAt: '2026-01-01T00:00:00.000Z' },
      {
        role: 'assistant',
        agent: 'triage',
        content: '',
        toolCalls: [{ id: 'h1', name: 'handoff_to_billing', arguments: '{}' }],
        id: 'm-3',
        seq: 2,
        createdAt: '2026-01-01T00:00:01Z',
      },
      {
        id: 'm-4',
        seq: 3,
        role: 'context',
        content: 'x',
        createdAt: '2026-01-01T00:00:02.5Z',
        extra: 'unknown keys are allowed',
      },
    ];
    for (const message of messages) {
      expect(accepts(message)).toBe(true);
      expect(fastAcceptsMessage(message)).toBe(true);
    }
  });

  it('never accepts a message MessageSchema rejects, whatever one field holds', () => {
    let checked = 0;
    for (const field of Object.keys(MessageSchema.shape)) {
      for (const sample of samples) {
        for (const base of [full, { id: 'm', seq: 1, role: 'user', content: '', createdAt: '' }]) {
          const message: Record<string, unknown> = { ...base, [field]: sample };
          if (sample === undefined) delete message[field];
          if (fastAcceptsMessage(message)) expect(accepts(message), `${field} = ${String(sample)}`).toBe(true);
          checked += 1;
        }
      }
    }
    for (const value of samples) expect(fastAcceptsMessage(value) && !accepts(value)).toBe(false);
    expect(checked).toBeGreaterThan(500);
  });

  it('leaves the error message to zod: the store still names the bad field', async () => {
    const store = new InMemoryStore();
    await store.createSession({ id: 'fast-1' });
    const bad = { ...full, seq: 1, durationMs: -1 };
    await expect(store.appendMessages('fast-1', 'main', [bad])).rejects.toThrow(InvalidInputError);
    await expect(store.appendMessages('fast-1', 'main', [bad])).rejects.toThrow(/durationMs/);
  });
});
