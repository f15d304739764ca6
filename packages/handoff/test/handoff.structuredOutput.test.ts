import { agent, InMemoryStore, OutputValidationError } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { type collect, ofType } from './support/helpers.js';

const Triage = z.object({ topic: z.enum(['billing', 'shipping']), urgent: z.boolean() });

/** A triage agent with an outputType that hands billing questions off and classifies the rest itself. */
function desk(triageScript: ConstructorParameters<typeof ScriptedModel>[0]) {
  const triage = agent({
    name: 'triage',
    description: 'Sorts requests.',
    instructions: 'Classify.',
    model: new ScriptedModel(triageScript),
    outputType: Triage,
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds.',
    instructions: 'Refund.',
    model: new ScriptedModel([{ text: 'Refund issued.' }]),
  });
  return new HandoffBuilder({ name: 'structured' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(new InMemoryStore())
    .build();
}

describe('structured output in a handoff workflow', () => {
  it('run() gives the typed value of an agent with an outputType', async () => {
    const workflow = desk([{ text: '{"topic":"shipping","urgent":false}' }]);
    const result = await workflow.run('Where is my parcel?');
    expect(result.agent).toBe('triage');
    expect(result.output).toBe('{"topic":"shipping","urgent":false}');
    expect(result.structuredOutput).toEqual({ topic: 'shipping', urgent: false });
    expect(ofType(result.events, 'message').at(-1)?.structuredOutput).toEqual({ topic: 'shipping', urgent: false });
  });

  it('an agent with an outputType can still hand off; the specialist answers in plain text', async () => {
    const workflow = desk([{ toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }]);
    const result = await workflow.run('I was charged twice');
    expect(ofType(result.events, 'handoff')).toEqual([expect.objectContaining({ from: 'triage', to: 'billing' })]);
    expect(result.output).toBe('Refund issued.');
    expect(result.structuredOutput).toBeUndefined();
  });

  it('an answer still invalid after one correction fails the turn with OutputValidationError; the user message stays stored', async () => {
    const workflow = desk([{ text: 'billing, I think' }, { text: '{"topic":"returns","urgent":true}' }]);
    const session = await workflow.session({ id: 'so-1' });
    const events: Awaited<ReturnType<typeof collect>> = [];
    const failure = await (async () => {
      for await (const event of session.send('hello')) events.push(event);
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutputValidationError);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'OUTPUT_VALIDATION', fatal: true });
    expect(session.messages.map((m) => m.role)).toEqual(['user']);
  });
});
