/**
 * OpenTelemetry tracing of turns (issue 13): the span tree of a handoff turn with a parallel tool
 * call and an approval pause, and of its resume in a fresh workflow over the same FileStore folder,
 * recorded by the OpenTelemetry SDK's InMemorySpanExporter.
 */
import { agent, FileStore, InMemoryStore, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder, type TelemetryOptions } from '../src/index.js';
import { collect, lastOf, ofType, tempDir } from './support/helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Triage hands off to billing; billing looks the order up and checks payments at once, then asks to refund (approval needed). */
function desk(store: Store, telemetry: TelemetryOptions, refunds: string[] = []) {
  const lookUpOrder = tool({
    name: 'look_up_order',
    description: 'Finds an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      await sleep(30);
      return `Order ${orderId}: 40 EUR`;
    },
  });
  const checkPayments = tool({
    name: 'check_payments',
    description: 'Lists the payments of an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async () => {
      await sleep(5);
      throw new Error('payments service unavailable');
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an amount.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(`refund ${amount}`);
      return `Refunded ${amount} EUR.`;
    },
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route.',
    model: new ScriptedModel(
      (request) =>
        lastOf(request)?.role === 'user'
          ? {
              toolCalls: [{ id: 'to_billing', name: 'handoff_to_billing', arguments: { reason: 'double charge' } }],
              usage: { inputTokens: 50, outputTokens: 7 },
            }
          : { text: '?' },
      { model: 'router-1' },
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds and charges.',
    instructions: 'Help.',
    tools: [lookUpOrder, checkPayments, refund],
    model: new ScriptedModel(
      (request) => {
        const tools = request.messages.filter((m) => m.role === 'tool').map((m) => m.toolName);
        if (!tools.includes('look_up_order')) {
          return {
            toolCalls: [
              { id: 'look_1', name: 'look_up_order', arguments: { orderId: '1234' } },
              { id: 'pay_1', name: 'check_payments', arguments: { orderId: '1234' } },
            ],
            usage: { inputTokens: 120, outputTokens: 20 },
          };
        }
        if (!tools.includes('refund'))
          return {
            toolCalls: [{ id: 'refund_1', name: 'refund', arguments: { amount: 40 } }],
            usage: { inputTokens: 160, outputTokens: 9 },
          };
        return { text: 'Refunded.', usage: { inputTokens: 180, outputTokens: 3 } };
      },
      { model: 'gpt-test' },
    ),
  });
  return new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .telemetry(telemetry)
    .build();
}

/** Span start order, recorded as spans start (the SDK's start times have millisecond precision: siblings started together tie). */
const started = new Map<string, number>();
const startOrder: SpanProcessor = {
  onStart: (span) => void started.set(span.spanContext().spanId, started.size),
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

function recorder() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [startOrder, new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('test') };
}

/** The finished spans as an indented tree, children in start order: `name [status]`. */
function tree(spans: readonly ReadableSpan[]): string[] {
  const children = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of [...(children.get(parent) ?? [])].sort((a, b) => startIndex(a) - startIndex(b))) {
      lines.push(`${'  '.repeat(depth)}${span.name}${span.status.code === SpanStatusCode.ERROR ? ' [error]' : ''}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

const startIndex = (span: ReadableSpan) => started.get(span.spanContext().spanId) ?? -1;

/** Orders two OpenTelemetry HrTimes (`[seconds, nanoseconds]`; as one number they would lose precision). */
const before = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];
const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: readonly ReadableSpan[], name: string) => {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};

describe('OpenTelemetry spans of a turn', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
    trace.disable();
  });

  it('a handoff turn with a parallel tool call and an approval pause, then its resume in a fresh workflow', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const { exporter, tracer } = recorder();
    const refunds: string[] = [];

    const firstStore = new FileStore({ directory: dir.path });
    const first = desk(firstStore, { tracer }, refunds);
    const session = await first.session({ id: 'trace-1' });
    const paused = await collect(session.send('I was charged twice for order 1234'));
    const [request] = ofType(paused, 'request');
    expect(request?.request).toMatchObject({ type: 'tool_approval', toolName: 'refund' });
    await firstStore.close();

    const firstSpans = exporter.getFinishedSpans();
    expect(tree(firstSpans)).toEqual([
      'invoke_workflow desk',
      '  invoke_agent triage',
      '    chat router-1',
      '    execute_tool handoff_to_billing',
      '  invoke_agent billing',
      '    chat gpt-test',
      '    execute_tool look_up_order',
      '    execute_tool check_payments [error]',
      '    chat gpt-test',
      '    execute_tool refund',
    ]);
    const turn1 = one(firstSpans, 'invoke_workflow desk');
    expect(turn1.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.conversation.id': 'trace-1',
      'baton.session.id': 'trace-1',
      'baton.branch.id': 'main',
      'baton.turn': 1,
      'baton.turn.paused': true,
      'gen_ai.usage.input_tokens': 50 + 120 + 160,
      'gen_ai.usage.output_tokens': 7 + 20 + 9,
    });
    expect(turn1.events.map((e) => e.name)).toContain('baton.checkpoint');
    expect(turn1.status.code).toBe(SpanStatusCode.UNSET);

    const triage = one(firstSpans, 'invoke_agent triage');
    expect(triage.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'triage',
      'baton.agent': 'triage',
      'baton.handoff.target': 'billing',
    });
    expect(triage.events.find((e) => e.name === 'baton.handoff')?.attributes).toEqual({
      'baton.handoff.source': 'triage',
      'baton.handoff.target': 'billing',
      'baton.handoff.reason': 'double charge',
    });
    expect(one(firstSpans, 'chat router-1').attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'router-1',
      'gen_ai.usage.input_tokens': 50,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });

    // The two calls of one response ran concurrently: their spans overlap.
    const look = one(firstSpans, 'execute_tool look_up_order');
    const pay = one(firstSpans, 'execute_tool check_payments');
    expect(before(pay.startTime, look.endTime)).toBeLessThan(0);
    expect(startIndex(look)).toBeLessThan(startIndex(pay));
    expect(look.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'look_up_order',
      'gen_ai.tool.call.id': 'look_1',
      'gen_ai.tool.type': 'function',
    });
    expect(look.attributes['gen_ai.tool.call.arguments']).toBeUndefined(); // contents are off by default
    expect(pay.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'pay_1', 'error.type': 'tool_error' });

    const refundPaused = one(firstSpans, 'execute_tool refund');
    expect(refundPaused.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'refund_1',
      'baton.tool.awaiting': 'tool_approval',
    });
    expect(refundPaused.events.find((e) => e.name === 'baton.request')?.attributes).toMatchObject({
      'baton.request.id': request!.request.id,
      'baton.request.type': 'tool_approval',
      'gen_ai.tool.name': 'refund',
    });
    // Every span of the turn belongs to one trace.
    expect(new Set(firstSpans.map((s) => s.spanContext().traceId)).size).toBe(1);

    // A fresh workflow (as another process would build it) answers the approval.
    exporter.reset();
    const secondStore = new FileStore({ directory: dir.path });
    const second = desk(secondStore, { tracer }, refunds);
    const restored = await second.session({ id: 'trace-1' });
    const resumed = await collect(restored.respond(request!.request.id, { approved: true }));
    expect(resumed.at(-1)).toMatchObject({ type: 'turn.completed' });
    expect(refunds).toEqual(['refund 40']);
    await secondStore.close();

    const secondSpans = exporter.getFinishedSpans();
    expect(tree(secondSpans)).toEqual([
      'invoke_workflow desk',
      '  invoke_agent billing',
      '    execute_tool refund',
      '    chat gpt-test',
    ]);
    const turn2 = one(secondSpans, 'invoke_workflow desk');
    expect(turn2.links).toHaveLength(1);
    expect(turn2.links[0]!.context).toMatchObject({
      traceId: turn1.spanContext().traceId,
      spanId: turn1.spanContext().spanId,
    });
    expect(turn2.attributes).toMatchObject({
      'baton.session.id': 'trace-1',
      'gen_ai.usage.input_tokens': 180,
      'gen_ai.usage.output_tokens': 3,
    });
    expect(turn2.attributes['baton.turn.paused']).toBeUndefined();
    expect(one(secondSpans, 'execute_tool refund').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records a failed model call with ERROR status and an exception event on every open span', async () => {
    const { exporter, tracer } = recorder();
    const broken = agent({
      name: 'triage',
      description: 'Routes.',
      instructions: 'Route.',
      model: new ScriptedModel([{ error: new Error('model endpoint down') }]),
    });
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(broken).telemetry({ tracer }).build();
    const session = await workflow.session({ id: 'broken-1' });
    await expect(collect(session.send('hello'))).rejects.toThrow('model endpoint down');
    const spans = exporter.getFinishedSpans();
    expect(tree(spans)).toEqual([
      'invoke_workflow desk [error]',
      '  invoke_agent triage [error]',
      '    chat scripted [error]',
    ]);
    for (const span of spans) {
      expect(span.events.find((e) => e.name === 'exception')?.attributes).toMatchObject({
        'exception.message': 'model endpoint down',
      });
      expect(span.attributes['error.type']).toBe('Error');
    }
  });

  it('puts message contents on spans only with captureContent', async () => {
    const { exporter, tracer } = recorder();
    const session = await desk(new InMemoryStore(), { tracer, captureContent: true }).session({ id: 'content-1' });
    await collect(session.send('I was charged twice for order 1234'));
    const spans = exporter.getFinishedSpans();
    expect(JSON.parse(String(one(spans, 'invoke_workflow desk').attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'I was charged twice for order 1234' }] },
    ]);
    expect(one(spans, 'execute_tool look_up_order').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"orderId":"1234"}',
      'gen_ai.tool.call.result': 'Order 1234: 40 EUR',
    });
  });

  it('uses the globally registered tracer provider by default, and stores no trace context without one', async () => {
    const store = new InMemoryStore();
    const untraced = await desk(store, {}).session({ id: 'plain-1' });
    await collect(untraced.send('I was charged twice for order 1234'));
    expect((await store.loadCheckpoint('plain-1', 'main'))?.traceparent).toBeUndefined();

    const { exporter, provider } = recorder();
    trace.setGlobalTracerProvider(provider);
    const traced = await desk(store, {}).session({ id: 'global-1' });
    await collect(traced.send('I was charged twice for order 1234'));
    const turn = one(exporter.getFinishedSpans(), 'invoke_workflow desk');
    expect(turn.instrumentationScope.name).toBe('@baton/handoff');
    const { traceId, spanId } = turn.spanContext();
    expect((await store.loadCheckpoint('global-1', 'main'))?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });
});
