/**
 * The oracle on hand-made evidence: a sound trial passes, and each kind of damage the crash
 * campaign looks for is reported under its invariant.
 */
import type { Message, Session } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { judgeTrial, transcriptOf } from './oracle.js';
import type { SideLogRecord } from './sideLog.js';

const at = '2026-11-23T10:00:00.000Z';
const history: Message[] = [
  { id: 'm1', seq: 1, role: 'user', content: '[u1] charged twice', createdAt: at },
  {
    id: 'm2',
    seq: 2,
    role: 'assistant',
    agent: 'triage',
    content: '',
    toolCalls: [{ id: 'c1', name: 'handoff_to_billing', arguments: '{}' }],
    createdAt: at,
  },
  {
    id: 'm3',
    seq: 3,
    role: 'tool',
    agent: 'triage',
    content: 'Transferred to billing.',
    toolCallId: 'c1',
    toolName: 'handoff_to_billing',
    createdAt: at,
  },
  {
    id: 'm4',
    seq: 4,
    role: 'assistant',
    agent: 'billing',
    content: '',
    toolCalls: [{ id: 'c2', name: 'refund', arguments: '{"amount":40}' }],
    createdAt: at,
  },
  {
    id: 'm5',
    seq: 5,
    role: 'tool',
    agent: 'billing',
    content: 'refunded',
    toolCallId: 'c2',
    toolName: 'refund',
    createdAt: at,
  },
  { id: 'm6', seq: 6, role: 'assistant', agent: 'billing', content: 'Done.', createdAt: at },
];
const closed = { id: 's', status: 'closed', version: 9 } as Session;
const sideLog: SideLogRecord[] = [
  { t: 'model', agent: 'billing', hash: 'h', ids: ['m1'], markers: ['[u1]'], toolCallIds: [], resultIds: [] },
  { t: 'tool.start', toolCallId: 'c2', agent: 'billing', tool: 'refund' },
  { t: 'tool.end', toolCallId: 'c2', agent: 'billing', tool: 'refund' },
  { t: 'tool.result', toolCallId: 'c2', agent: 'billing', tool: 'refund' },
  {
    t: 'ack',
    messages: history.slice(0, 4).map((m) => ({ id: m.id, seq: m.seq })),
    requests: [{ id: 'r1', toolCallId: 'c2' }],
  },
  { t: 'answer', requestId: 'r1', toolCallId: 'c2' },
  { t: 'ack', messages: history.map((m) => ({ id: m.id, seq: m.seq })), requests: [] },
];
const reference = transcriptOf(history);
const renumber = (messages: Message[]) => messages.map((m, index) => ({ ...m, seq: index + 1 }));
const invariantsOf = (messages: Message[], log: SideLogRecord[] = sideLog, session: Session | undefined = closed) =>
  [...new Set(judgeTrial({ messages, session, sideLog: log }, reference).map((v) => v.invariant))].sort();

describe('judgeTrial', () => {
  it('finds nothing wrong with a sound trial', () => {
    expect(judgeTrial({ messages: history, session: closed, sideLog }, reference)).toEqual([]);
  });

  it('reports an acknowledged message that is gone', () => {
    expect(invariantsOf(renumber(history.filter((m) => m.id !== 'm6')))).toEqual([
      'acknowledged-lost',
      'transcript-differs',
    ]);
  });

  it('reports a specialist answer stored twice and a handoff made twice', () => {
    const twice = renumber([
      ...history.slice(0, 3),
      { ...history[1], id: 'm2b' } as Message,
      { ...history[2], id: 'm3b' } as Message,
      ...history.slice(3),
    ]);
    expect(invariantsOf(twice)).toEqual([
      'acknowledged-lost',
      'duplicated',
      'tool-call-unanswered',
      'transcript-differs',
    ]);
  });

  it('reports a tool call answered by another agent', () => {
    const wrong = history.map((m) => (m.id === 'm5' ? { ...m, agent: 'triage' } : m));
    expect(invariantsOf(wrong)).toEqual(['tool-result-wrong-agent', 'transcript-differs']);
  });

  it('reports a tool run again after its result was seen, and a model input holding a message twice', () => {
    const log: SideLogRecord[] = [
      ...sideLog,
      { t: 'tool.start', toolCallId: 'c2', agent: 'billing', tool: 'refund' },
      {
        t: 'model',
        agent: 'billing',
        hash: 'h2',
        ids: ['m1', 'm1'],
        markers: ['[u1]', '[u1]'],
        toolCallIds: [],
        resultIds: [],
      },
    ];
    expect(invariantsOf(history, log)).toEqual(['model-input-duplicate', 'tool-rerun-after-result']);
  });

  it('reports a paused request answered under another id than the one acknowledged', () => {
    const log: SideLogRecord[] = sideLog.map((r) => (r.t === 'answer' ? { ...r, requestId: 'r2' } : r));
    expect(invariantsOf(history, log)).toEqual(['request-changed']);
  });

  it('reports a session left open', () => {
    expect(invariantsOf(history, sideLog, { ...closed, status: 'active' })).toEqual(['not-closed']);
  });
});
