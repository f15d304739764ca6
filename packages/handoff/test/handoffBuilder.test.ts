import { ConfigurationError, type Executor } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, scriptedAgent } from './support/helpers.js';

describe('HandoffBuilder', () => {
  it('defaults: first participant coordinates, coordinator and specialists both ways', () => {
    const { triage, billing } = deskAgents();
    const shipping = scriptedAgent('shipping', () => ({ text: 'x' }));
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, billing, shipping).build();
    expect(workflow.config.coordinator).toBe('triage');
    expect([...workflow.config.edges].map(([from, to]) => [from, [...to]])).toEqual([
      ['triage', ['billing', 'shipping']],
      ['billing', ['triage']],
      ['shipping', ['triage']],
    ]);
    expect(workflow.config.checkpointKeep).toEqual({ last: 5 });
    expect(workflow.config.maxHandoffsPerTurn).toBe(5);
  });

  it('draws the handoff graph as a Mermaid flowchart with the coordinator marked', () => {
    const { triage, billing } = deskAgents();
    const shipping = scriptedAgent('shipping', () => ({ text: 'x' }));
    const workflow = new HandoffBuilder()
      .participants(triage, billing, shipping)
      .coordinator(triage)
      .handoffs(triage, [billing, shipping])
      .handoffs(billing, ['triage'])
      .build();
    expect(workflow.toMermaid()).toBe(
      [
        'flowchart LR',
        '  n0(["triage (coordinator)"]):::coordinator',
        '  n1["billing"]',
        '  n2["shipping"]',
        '  n0 --> n1',
        '  n0 --> n2',
        '  n1 --> n0',
        '  classDef coordinator stroke-width:3px',
      ].join('\n'),
    );
  });

  it.each([
    ['no participants', (b: HandoffBuilder) => b, /no participants/],
    [
      'a duplicate name',
      (b: HandoffBuilder) => b.participants(deskAgents().triage, deskAgents().triage),
      /Two participants are named "triage"/,
    ],
    [
      'an unknown coordinator',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).coordinator('boss'),
      /coordinator "boss" is not a participant/,
    ],
    [
      'an unknown handoff target',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).handoffs('triage', ['ghost']),
      /handoff target "ghost"/,
    ],
    [
      'a self-handoff',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).handoffs('triage', ['triage']),
      /cannot hand off to itself/,
    ],
    [
      'a negative limit',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).maxHandoffsPerTurn(-1),
      /maxHandoffsPerTurn must be an integer ≥ 0, not -1/,
    ],
    [
      'an autonomous limit of 0',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).autonomous({ maxTurns: 0 }),
      /maxTurns/,
    ],
    [
      'a bad retention',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).checkpoints({ keep: { last: 0 } }),
      /keep/,
    ],
    [
      'a bad frequency',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).checkpoints({ every: 'hourly' as never }),
      /'turn', 'step' or 'manual', not "hourly"/,
    ],
    [
      'an unknown return override',
      (b: HandoffBuilder) => b.participants(deskAgents().triage).returnTo('previous', { ghost: 'coordinator' }),
      /returnTo override "ghost"/,
    ],
    [
      'a participant that is neither',
      (b: HandoffBuilder) => b.participants({ name: 'odd' } as never),
      /neither an agent/,
    ],
  ])('refuses %s with a ConfigurationError', (_name, configure, message) => {
    const build = () => configure(new HandoffBuilder()).build();
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(message);
  });

  it('accepts any Executor as a participant', async () => {
    const echo: Executor = {
      name: 'echo',
      description: 'Repeats the user.',
      // biome-ignore lint/correctness/useYield: an executor may finish without events
      async *execute(input) {
        const [message] = await input.journal.commit([
          { role: 'assistant', agent: 'echo', content: `echo: ${input.history.at(-1)?.content}` },
        ]);
        return {
          type: 'reply',
          message: message!,
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 },
        };
      },
    };
    const session = await new HandoffBuilder().participants(echo).build().session({ id: 'b-1' });
    await collect(session.send('hi'));
    expect(session.messages.map((m) => m.content)).toEqual(['hi', 'echo: hi']);
  });

  it('passes inspect through to XState’s inspection API', async () => {
    const { triage, billing } = deskAgents();
    const seen: string[] = [];
    const workflow = new HandoffBuilder()
      .participants(triage, billing)
      .inspect((event) => {
        if (event.type === '@xstate.event') seen.push((event.event as { type: string }).type);
      })
      .build();
    await collect((await workflow.session({ id: 'b-2' })).send('hello'));
    expect(seen).toEqual(expect.arrayContaining(['xstate.init', 'USER_TURN', 'HANDOFF', 'REPLY']));
  });
});
