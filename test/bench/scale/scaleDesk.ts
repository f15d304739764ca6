/**
 * The workflow every scale-out worker serves: a triage coordinator that hands each customer message
 * to billing, and billing answering `re: <the customer's words>` (so a check can tell which turn an
 * answer belongs to). Both models are instant ScriptedModels, optionally delayed by a fixed model
 * latency per call, as a remote model would be.
 */
import { agent, type ModelClient, type ModelRequest, type ModelStreamEvent, type Store } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';

/** The text billing answers a customer's message with. */
export function answerTo(text: string): string {
  return `re: ${text}`;
}

/** A model that waits `latencyMs` before the wrapped model answers (a remote model's time to respond). */
class DelayedModel implements ModelClient {
  constructor(
    readonly inner: ModelClient,
    readonly latencyMs: number,
  ) {}

  get model(): string {
    return this.inner.model;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    yield* this.inner.stream(request);
  }
}

/**
 * Builds the scale-out desk on `store`.
 * @param modelLatencyMs milliseconds each model call waits before answering (0: instant)
 */
export function scaleDesk(store: Store, modelLatencyMs: number): HandoffWorkflow {
  const lastUserText = (request: ModelRequest) => {
    const last = request.messages.findLast((m) => m.role === 'user');
    return last?.content ?? '';
  };
  const triage = agent({
    name: 'triage',
    description: 'Routes customers to specialists.',
    instructions: 'Route the customer.',
    model: new DelayedModel(
      new ScriptedModel(
        (request) =>
          request.messages.at(-1)?.role === 'user'
            ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'billing' } }] }
            : { text: 'Anything else?' },
        { record: false },
      ),
      modelLatencyMs,
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing questions.',
    model: new DelayedModel(
      new ScriptedModel((request) => ({ text: answerTo(lastUserText(request)) }), { record: false }),
      modelLatencyMs,
    ),
  });
  return new HandoffBuilder({ name: 'scale' }).participants(triage, billing).coordinator(triage).store(store).build();
}
