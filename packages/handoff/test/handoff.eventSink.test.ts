/**
 * The handoff turn emits into one event sink (`Executor.run`) and falls back to a participant's
 * `execute` generator when it has no `run`. Both paths must give a caller the same events in the
 * same order and store the same history; with tracing, spans that an instrumented model client or
 * tool starts nest under the model call's or tool's span inside the agent's span, on both paths.
 */
import {
  type Agent,
  AgentExecutor,
  agent,
  type BatonEvent,
  type Executor,
  type ExecutorInput,
  type ExecutorOutcome,
  InMemoryStore,
  type ModelClient,
  type ModelRequest,
  tool,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, trace, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder, type HandoffWorkflow } from '../src/index.js';
import { collect, deskAgents, lastOf } from './support/helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model client that starts a span of its own per call, as an instrumented HTTP client would (parented by the active context). */
class InstrumentedModel implements ModelClient {
  constructor(
    readonly inner: ScriptedModel,
    readonly tracer: Tracer | undefined,
  ) {}

  get model(): string {
    return this.inner.model;
  }

  async *stream(request: ModelRequest) {
    const span = this.tracer?.startSpan('POST /chat/completions');
    await sleep(1);
    span?.end();
    yield* this.inner.stream(request);
  }
}

/**
 * Triage hands off to billing; billing looks the order up, then asks to refund (approval), then answers.
 * `executeOnly`: each participant is an Executor with `execute` only (the generator path).
 */
function desk(executeOnly: boolean, tracer?: Tracer): HandoffWorkflow {
  const lookUp = tool({
    name: 'look_up_order',
    description: 'Finds an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      const span = tracer?.startSpan('GET /orders');
      await sleep(1);
      span?.end();
      return `Order ${orderId}: 40 EUR`;
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => `Refunded ${amount} EUR.`,
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route.',
    model: new InstrumentedModel(
      new ScriptedModel((request) =>
        lastOf(request)?.role === 'user'
          ? {
              toolCalls: [
                {
                  id: `to_billing_${request.messages.length}`,
                  name: 'handoff_to_billing',
                  arguments: { reason: 'charges' },
                },
              ],
            }
          : { text: 'Anything else?' },
      ),
      tracer,
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds and charges.',
    instructions: 'Help.',
    tools: [lookUp, refund],
    model: new InstrumentedModel(
      new ScriptedModel((request) => {
        const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.toolName);
        if (!results.includes('look_up_order'))
          return {
            toolCalls: [{ id: 'look_1', name: 'look_up_order', arguments: { orderId: '1234' } }],
            usage: { inputTokens: 12, outputTokens: 3 },
          };
        if (!results.includes('refund'))
          return { toolCalls: [{ id: 'refund_1', name: 'refund', arguments: { amount: 40 } }] };
        return {
          text: 'Your refund of 40 EUR is on its way, thank you for waiting.',
          usage: { inputTokens: 30, outputTokens: 9 },
        };
      }),
      tracer,
    ),
  });
  const participants: (Agent | Executor)[] = executeOnly
    ? [generatorOnly(triage), generatorOnly(billing)]
    : [triage, billing];
  const builder = new HandoffBuilder({ name: 'desk' })
    .participants(...participants)
    .coordinator('triage')
    .store(new InMemoryStore());
  return (tracer === undefined ? builder : builder.telemetry({ tracer })).build();
}

/** An agent's executor without `run`: the turn reads its `execute` generator. */
function generatorOnly(a: Agent): Executor {
  const inner = new AgentExecutor(a);
  return {
    name: inner.name,
    description: inner.description,
    execute: (input) => inner.execute(input),
    validateApprovedArguments: (name, args) => inner.validateApprovedArguments(name, args),
  };
}

/** Events without what differs between two runs (ids, times, durations). */
function comparable(events: readonly BatonEvent[]): unknown {
  const ids = new Map<string, string>();
  return JSON.parse(JSON.stringify(events), (key, value) => {
    if (key === 'createdAt' || key === 'durationMs') return '…';
    if ((key === 'id' || key === 'parentId' || key === 'toolCallId') && typeof value === 'string') {
      if (!ids.has(value)) ids.set(value, `id-${ids.size}`);
      return ids.get(value);
    }
    return value;
  });
}

/** A conversation: a handoff turn that pauses on an approval, its answer, and a second turn. */
async function conversation(workflow: HandoffWorkflow): Promise<{ events: BatonEvent[][]; stored: unknown }> {
  const session = await workflow.session({ id: 'sink-1' });
  const first = await collect(session.send('I was charged twice for order 1234'));
  const request = first.find((e) => e.type === 'request');
  if (request?.type !== 'request') throw new Error('the first turn did not pause on the refund');
  const second = await collect(session.respond(request.request.id, { approved: true }));
  const third = await collect(session.send('Thanks'));
  const messages = await workflow.config.store.readMessages('sink-1', 'main');
  return {
    events: [first, second, third],
    stored: comparable(messages.map((m) => ({ ...m, id: m.id }) as unknown as BatonEvent)),
  };
}

describe('the handoff turn through Executor.run and through execute', () => {
  let disposeContext: (() => void) | undefined;
  afterEach(() => {
    disposeContext?.();
    disposeContext = undefined;
    trace.disable();
  });

  it('gives the same events in the same order and stores the same history', async () => {
    const viaSink = await conversation(desk(false));
    const viaGenerator = await conversation(desk(true));
    expect(viaSink.events[0]!.map((e) => e.type)).toEqual([
      'turn.started',
      'message',
      'agent.started',
      'model.started',
      'model.completed',
      'message',
      'tool.call',
      'tool.result',
      'message',
      'handoff',
      'agent.started',
      'model.started',
      'model.completed',
      'checkpoint',
      'message',
      'tool.call',
      'tool.result',
      'message',
      'model.started',
      'model.completed',
      'checkpoint',
      'message',
      'tool.call',
      'checkpoint',
      'request',
      'turn.completed',
    ]);
    for (const [index, events] of viaSink.events.entries())
      expect(comparable(events), `call ${index + 1}`).toEqual(comparable(viaGenerator.events[index]!));
    expect(viaSink.stored).toEqual(viaGenerator.stored);
  });

  it('uses execute for an AgentExecutor subclass that overrides execute alone, and run when it overrides neither', async () => {
    const activations: string[] = [];
    class Counted extends AgentExecutor {
      override async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
        activations.push(this.name);
        return yield* super.execute(input);
      }
    }
    const { triage, billing } = deskAgents();
    const counted = await new HandoffBuilder()
      .participants(new Counted(triage), new Counted(billing))
      .coordinator('triage')
      .store(new InMemoryStore())
      .build()
      .session({ id: 'sub-1' });
    const events = await collect(counted.send('Refund please'));
    expect(activations).toEqual(['triage', 'billing']);
    expect(events.at(-1)?.type).toBe('turn.completed');

    const plain = await new HandoffBuilder()
      .participants(new AgentExecutor(triage), new AgentExecutor(billing))
      .coordinator('triage')
      .store(new InMemoryStore())
      .build()
      .session({ id: 'sub-1' });
    expect(comparable(await collect(plain.send('Refund please')))).toEqual(comparable(events));
  });

  it('nests the spans of an instrumented model client and tool under the model call and the tool, inside the agent span, on both paths', async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    disposeContext = () => {
      manager.disable();
      context.disable();
    };
    for (const executeOnly of [false, true]) {
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracer = provider.getTracer('test');
      await conversation(desk(executeOnly, tracer));
      const spans = exporter.getFinishedSpans();
      const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
      /** The span's name and its ancestors' names, innermost first. */
      const path = (span: ReadableSpan): string[] => {
        const names: string[] = [];
        for (
          let at: ReadableSpan | undefined = span;
          at !== undefined;
          at = byId.get(at.parentSpanContext?.spanId ?? '')
        )
          names.push(at.name);
        return names;
      };
      const calls = spans.filter((s) => s.name === 'POST /chat/completions');
      expect(calls.length, `executeOnly: ${executeOnly}`).toBe(6);
      for (const call of calls) {
        const [, chat, agentSpan, turn] = path(call);
        expect(chat).toMatch(/^chat /);
        expect(agentSpan).toMatch(/^invoke_agent (triage|billing)$/);
        expect(turn).toBe('invoke_workflow desk');
      }
      const lookups = spans.filter((s) => s.name === 'GET /orders');
      expect(lookups).toHaveLength(1);
      expect(path(lookups[0]!)).toEqual([
        'GET /orders',
        'execute_tool look_up_order',
        'invoke_agent billing',
        'invoke_workflow desk',
      ]);
    }
  });
});
