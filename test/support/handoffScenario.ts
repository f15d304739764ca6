/**
 * Small helpers of the cross-package handoff scenarios: reading an event stream, picking events,
 * checking tool calls, and agents on a {@link ScriptedModel} whose tool call ids stay unique.
 */
import { type Agent, agent, type BatonEvent, type Message, type Tool } from '@baton/core';
import { type ScriptedResponder, ScriptedModel } from '@baton/core/testing';

/** Reads an event stream to its end. */
export async function collect(stream: AsyncIterable<BatonEvent>): Promise<BatonEvent[]> {
  const events: BatonEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The events of one type. */
export function ofType<T extends BatonEvent['type']>(events: readonly BatonEvent[], type: T): Extract<BatonEvent, { type: T }>[] {
  return events.filter((e): e is Extract<BatonEvent, { type: T }> => e.type === type);
}

/** Tool call ids in `messages` without exactly one tool result, and results without a call (DESIGN.md invariant 3). */
export function danglingToolCalls(messages: readonly Message[]): string[] {
  const results = new Map<string, number>();
  for (const m of messages) if (m.role === 'tool' && m.toolCallId !== undefined) results.set(m.toolCallId, (results.get(m.toolCallId) ?? 0) + 1);
  const calls = new Set(messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id));
  return [...[...calls].filter((id) => results.get(id) !== 1), ...[...results.keys()].filter((id) => !calls.has(id))];
}

/** The last message of a model request. */
export function lastOf(request: Parameters<ScriptedResponder>[0]) {
  return request.messages.at(-1);
}

/** An agent on a responder-driven ScriptedModel (which gives unscripted tool calls unique `call_<uuidv7>` ids). */
export function scriptedAgent(name: string, responder: ScriptedResponder, tools: Tool[] = []): Agent & { model: ScriptedModel } {
  return agent({ name, description: `${name} specialist`, instructions: `You are ${name}.`, model: new ScriptedModel(responder), tools }) as Agent & { model: ScriptedModel };
}
