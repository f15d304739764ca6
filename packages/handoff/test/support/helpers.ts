import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Agent,
  agent,
  type BatonEvent,
  FileStore,
  InMemoryStore,
  type Message,
  type Store,
  type Tool,
} from '@baton/core';
import { type ScriptedResponder, ScriptedModel } from '@baton/core/testing';

/** Reads an event stream to its end. */
export async function collect(stream: AsyncIterable<BatonEvent>): Promise<BatonEvent[]> {
  const events: BatonEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Tool call ids in `messages` that do not have exactly one tool result (docs/architecture.md invariant 3). */
export function danglingToolCalls(messages: readonly Message[]): string[] {
  const results = new Map<string, number>();
  for (const m of messages)
    if (m.role === 'tool' && m.toolCallId) results.set(m.toolCallId, (results.get(m.toolCallId) ?? 0) + 1);
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  const bad = calls.filter((c) => results.get(c.id) !== 1).map((c) => c.id);
  const orphans = [...results.keys()].filter((id) => !calls.some((c) => c.id === id));
  return [...bad, ...orphans];
}

/** An agent on a responder-driven ScriptedModel (unscripted tool calls get ScriptedModel's unique `call_<uuidv7>` ids). */
export function scriptedAgent(
  name: string,
  responder: ScriptedResponder,
  tools: Tool[] = [],
  description = `${name} specialist`,
  record = true,
): Agent & { model: ScriptedModel } {
  return agent({
    name,
    description,
    instructions: `You are ${name}.`,
    model: new ScriptedModel(responder, { record }),
    tools,
  }) as Agent & { model: ScriptedModel };
}

/** The last message a model request holds (after the system instructions). */
export function lastOf(request: Parameters<ScriptedResponder>[0]) {
  return request.messages.at(-1);
}

/** A fresh temp folder under the OS temp dir, removed by `dispose`. */
export async function tempDir(prefix = 'baton-handoff-'): Promise<{ path: string; dispose(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, dispose: () => rm(path, { recursive: true, force: true }) };
}

/** Events of one type. */
export function ofType<T extends BatonEvent['type']>(
  events: readonly BatonEvent[],
  type: T,
): Extract<BatonEvent, { type: T }>[] {
  return events.filter((e): e is Extract<BatonEvent, { type: T }> => e.type === type);
}

/**
 * A coordinator that hands every user message to `target`, and a specialist that answers with
 * `Answer to: <user text>`. The classic two-model-calls-one-handoff turn.
 */
export function deskAgents(target = 'billing', record = true) {
  const triage = scriptedAgent(
    'triage',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user')
        return { toolCalls: [{ name: `handoff_to_${target}`, arguments: { reason: 'billing question' } }] };
      return { text: 'How else can I help?' };
    },
    [],
    'Routes customers to specialists.',
    record,
  );
  const billing = scriptedAgent(
    target,
    (request) => {
      const lastUser = request.messages.findLast((m) => m.role === 'user');
      return { text: `Answer to: ${lastUser?.content ?? ''}` };
    },
    [],
    'Refunds, charges, invoices.',
    record,
  );
  return { triage, billing };
}

/**
 * The embedded stores, each made fresh per call (FileStore in a temp folder removed by `disposeStores`),
 * for `describe.each(embeddedStores())`.
 */
export function embeddedStores(): [string, () => Promise<Store>][] {
  return [
    ['InMemoryStore', async () => new InMemoryStore()],
    [
      'FileStore',
      async () => {
        const dir = await tempDir();
        storeDirs.push(dir);
        return new FileStore({ directory: dir.path });
      },
    ],
  ];
}

const storeDirs: { dispose(): Promise<void> }[] = [];

/** Removes the temp folders of the FileStores {@link embeddedStores} made (call it in `afterAll`). */
export async function disposeStores(): Promise<void> {
  for (const dir of storeDirs.splice(0)) await dir.dispose();
}
