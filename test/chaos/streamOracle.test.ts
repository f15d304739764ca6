/**
 * The stream oracle of the `--replicas` campaign on hand-made witnesses: sound streams pass; an SSE
 * id that carried two different events, and a stored message the client never got, are reported.
 */
import type { Message } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type StreamWitness } from './replicaCustomer.js';
import { judgeStreams } from './streamOracle.js';

const at = '2026-11-28T10:00:00.000Z';
const stored: Message[] = [
  { id: 'm1', seq: 1, role: 'user', content: '[u1] charged twice', createdAt: at },
  { id: 'm2', seq: 2, role: 'assistant', agent: 'triage', content: 'On it.', createdAt: at },
];
const witness = (): StreamWitness => ({ events: new Map(), conflicts: [], messages: new Set(['m1', 'm2']) });

describe('judgeStreams', () => {
  it('passes when every id named one event and every stored message was seen', () => {
    expect(judgeStreams(witness(), stored)).toEqual([]);
  });

  it('reports an id that named two different events', () => {
    const seen = witness();
    seen.conflicts.push({ id: 'chat/main/2:3.1', first: '{"delta":"a"}', later: '{"delta":"b"}' });
    expect(judgeStreams(seen, stored).map((v) => v.invariant)).toEqual(['event-id-reused']);
  });

  it('reports a stored message no stream carried', () => {
    const seen = witness();
    seen.messages.delete('m2');
    const [violation] = judgeStreams(seen, stored);
    expect(violation?.invariant).toBe('message-unseen');
    expect(violation?.detail).toContain('seq 2 assistant (triage) m2');
  });
});

describe('canonicalJson', () => {
  it('gives the same text for the same event whatever the order of its keys', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: 'x' } })).toBe(
      canonicalJson({ a: { c: 'x', d: [1, { e: 3, f: 2 }] }, b: 1 }),
    );
  });
});
