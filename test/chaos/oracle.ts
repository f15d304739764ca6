/**
 * The chaos oracle: judges one trial from what a fresh store object reads and from the side log.
 * Each check is one invariant; a violation names it and says what was seen.
 */
import type { Message, Session } from '@baton/core';
import type { SideLogRecord } from './sideLog.js';

/** The invariants the oracle checks. */
export const INVARIANTS = [
  'acknowledged-lost',
  'duplicated',
  'tool-call-unanswered',
  'tool-result-wrong-agent',
  'tool-rerun-after-result',
  'model-input-duplicate',
  'request-changed',
  'transcript-differs',
  'not-closed',
  'event-id-reused',
  'message-unseen',
  'child-error',
  'store-unreadable',
] as const;

/** One of {@link INVARIANTS}. */
export type Invariant = (typeof INVARIANTS)[number];

/** A broken invariant and what showed it. */
export interface Violation {
  invariant: Invariant;
  detail: string;
}

/** What the oracle judges: the stored history and session (read with a fresh store object) and the side log. */
export interface TrialEvidence {
  messages: readonly Message[];
  session: Session | undefined;
  sideLog: readonly SideLogRecord[];
}

/** A message as the transcript compares it: what a user and the model would see, ids of messages and clocks aside. */
export interface TranscriptEntry {
  role: string;
  agent: string | undefined;
  content: string;
  toolCalls: string[] | undefined;
  toolCallId: string | undefined;
}

/**
 * The transcript of a history: role, agent, content, tool calls (id, name, arguments) and the tool call a result answers.
 * @example
 * ```ts
 * const reference = transcriptOf(await store.readMessages('chat-1', 'main'));
 * ```
 */
export function transcriptOf(messages: readonly Message[]): TranscriptEntry[] {
  return messages.map((m) => ({
    role: m.role,
    agent: m.agent,
    content: m.content,
    toolCalls: m.toolCalls?.map((c) => `${c.id} ${c.name}(${c.arguments})`),
    toolCallId: m.toolCallId,
  }));
}

/**
 * Checks every invariant of one trial.
 *
 * @param reference the transcript of the uninterrupted run
 * @returns the violations found (empty when the trial is sound)
 * @example
 * ```ts
 * const violations = judgeTrial({ messages, session, sideLog: readSideLog(path) }, reference);
 * ```
 */
export function judgeTrial(evidence: TrialEvidence, reference: readonly TranscriptEntry[]): Violation[] {
  const { messages, session, sideLog } = evidence;
  const violations: Violation[] = [];
  const add = (invariant: Invariant, detail: string) => violations.push({ invariant, detail });

  // No acknowledged message lost: each message acknowledged at a turn.completed is stored at the same seq.
  const stored = new Map(messages.map((m) => [m.id, m]));
  const lost = new Set<string>();
  for (const record of sideLog) {
    if (record.t !== 'ack') continue;
    for (const { id, seq } of record.messages) {
      const found = stored.get(id);
      if (found?.seq !== seq && !lost.has(id)) {
        lost.add(id);
        add(
          'acknowledged-lost',
          `message ${id} acknowledged at seq ${seq} is ${found === undefined ? 'missing' : `at seq ${found.seq}`}`,
        );
      }
    }
  }

  // None duplicated: ids, seqs, tool call ids and user markers each once.
  const seen = (label: string, keys: string[]) => {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const [key, count] of counts) if (count > 1) add('duplicated', `${label} ${key} stored ${count} times`);
  };
  seen(
    'message id',
    messages.map((m) => m.id),
  );
  seen(
    'seq',
    messages.map((m) => String(m.seq)),
  );
  seen(
    'tool call',
    messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)),
  );
  seen(
    'user message',
    messages.filter((m) => m.role === 'user').map((m) => m.content),
  );
  messages.forEach((m, index) => {
    if (m.seq !== index + 1) add('duplicated', `seqs are not 1..n: message ${index + 1} has seq ${m.seq}`);
  });

  // Every tool call has exactly one result, given by the agent that made the call.
  const judged = new Set<string>();
  for (const message of messages) {
    for (const call of message.toolCalls ?? []) {
      if (judged.has(call.id)) continue;
      judged.add(call.id);
      const results = messages.filter((m) => m.role === 'tool' && m.toolCallId === call.id);
      if (results.length !== 1)
        add('tool-call-unanswered', `${message.agent}'s call ${call.id} (${call.name}) has ${results.length} results`);
      for (const result of results) {
        if (result.agent !== message.agent)
          add(
            'tool-result-wrong-agent',
            `${message.agent}'s call ${call.id} (${call.name}) answered by ${result.agent} at seq ${result.seq}`,
          );
      }
    }
  }

  // No tool started again after its tool.result was seen.
  const resulted = new Set<string>();
  for (const record of sideLog) {
    if (record.t === 'tool.result') resulted.add(record.toolCallId);
    if (record.t === 'tool.start' && resulted.has(record.toolCallId))
      add(
        'tool-rerun-after-result',
        `${record.agent}'s ${record.tool} ${record.toolCallId} started again after its tool.result`,
      );
  }

  // No message twice in any model input.
  for (const record of sideLog) {
    if (record.t !== 'model') continue;
    for (const [label, keys] of [
      ['message', record.ids],
      ['marker', record.markers],
      ['tool call', record.toolCallIds],
      ['tool result', record.resultIds],
    ] as const) {
      const dup = keys.find((key, index) => keys.indexOf(key) !== index);
      if (dup !== undefined)
        add('model-input-duplicate', `${record.agent}'s model input ${record.hash} holds ${label} ${dup} twice`);
    }
  }

  // A request acknowledged at a turn.completed keeps its id until it is answered, in any process.
  const acknowledged = new Map<string, string>();
  for (const record of sideLog) {
    if (record.t === 'ack')
      for (const request of record.requests ?? [])
        if (!acknowledged.has(request.toolCallId)) acknowledged.set(request.toolCallId, request.id);
    if (record.t === 'answer') {
      const id = acknowledged.get(record.toolCallId);
      if (id !== undefined && id !== record.requestId)
        add(
          'request-changed',
          `the request for tool call ${record.toolCallId} was acknowledged as ${id} and answered as ${record.requestId}`,
        );
    }
  }

  const diff = transcriptDiff(transcriptOf(messages), reference);
  if (diff !== undefined) add('transcript-differs', diff);
  if (session?.status !== 'closed')
    add('not-closed', `session is ${session === undefined ? 'missing' : session.status}`);
  return violations;
}

/** Where two transcripts first differ, with the entries around it from both sides; `undefined` when equal. */
export function transcriptDiff(
  actual: readonly TranscriptEntry[],
  expected: readonly TranscriptEntry[],
): string | undefined {
  const show = (entry: TranscriptEntry | undefined) =>
    entry === undefined ? '(none)' : JSON.stringify(entry).slice(0, 220);
  const length = Math.max(actual.length, expected.length);
  for (let index = 0; index < length; index += 1) {
    if (JSON.stringify(actual[index]) === JSON.stringify(expected[index])) continue;
    const lines = [
      `first difference at seq ${index + 1} (stored ${actual.length} messages, expected ${expected.length}):`,
    ];
    for (let at = Math.max(0, index - 1); at < Math.min(length, index + 3); at += 1) {
      lines.push(`  seq ${at + 1} expected ${show(expected[at])}`, `  seq ${at + 1}   stored ${show(actual[at])}`);
    }
    return lines.join('\n');
  }
  return undefined;
}
