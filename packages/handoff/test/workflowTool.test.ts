import { afterAll, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import {
  collect,
  danglingToolCalls,
  disposeStores,
  embeddedStores,
  lastOf,
  ofType,
  scriptedAgent,
} from './support/helpers.js';

/** A billing team (billing-triage → invoices / refunds; refunds asks the user for the order) as a tool of a lone assistant. */
function assistantWithBillingTool() {
  const billingTriage = scriptedAgent('billing-triage', (request) => {
    const said = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
    return {
      toolCalls: [{ name: said.includes('invoice') ? 'handoff_to_invoices' : 'handoff_to_refunds', arguments: {} }],
    };
  });
  const invoices = scriptedAgent('invoices', (request) => ({
    text: `Invoice sent (${request.messages.findLast((m) => m.role === 'user')?.content}).`,
  }));
  const refunds = scriptedAgent('refunds', () => ({
    toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which order?' } }],
  }));
  const billing = new HandoffBuilder({ name: 'billing' })
    .participants(billingTriage, invoices, refunds)
    .coordinator(billingTriage)
    .build();
  const askBilling = billing.asTool({ name: 'ask_billing', description: 'Asks the billing team.' });
  const assistant = scriptedAgent(
    'assistant',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user') return { toolCalls: [{ name: 'ask_billing', arguments: { message: last.content } }] };
      return { text: `Billing says: ${last?.content ?? ''}` };
    },
    [askBilling],
  );
  return { assistant, billingTriage };
}

describe.each(embeddedStores())('workflow.asTool() on %s', (_name, makeStore) => {
  afterAll(disposeStores);

  it('answers with the inner workflow (a handoff inside), in a throwaway session: only the tool call and its result are stored', async () => {
    const store = await makeStore();
    const { assistant, billingTriage } = assistantWithBillingTool();
    const desk = new HandoffBuilder({ name: 'desk' }).participants(assistant).store(store).build();
    const session = await desk.session({ id: 'tool-1' });
    const events = await collect(session.send('Please send my invoice for May'));
    const [result] = ofType(events, 'tool.result');
    expect(result).toMatchObject({
      toolName: 'ask_billing',
      isError: false,
      content: 'Invoice sent (Please send my invoice for May).',
    });
    expect(ofType(events, 'message').at(-1)!.message).toMatchObject({
      agent: 'assistant',
      content: 'Billing says: Invoice sent (Please send my invoice for May).',
    });
    expect(billingTriage.model.requests).toHaveLength(1);
    const stored = await store.readMessages('tool-1', 'main');
    expect(stored.map((m) => m.agent ?? m.role)).toEqual(['user', 'assistant', 'assistant', 'assistant']);
    expect(danglingToolCalls(stored)).toEqual([]);
    expect((await store.listSessions({})).map((s) => s.id)).toEqual(['tool-1']);
  });

  it('a request raised inside becomes an error result quoting what the workflow needed; the outer turn goes on', async () => {
    const store = await makeStore();
    const { assistant } = assistantWithBillingTool();
    const desk = new HandoffBuilder({ name: 'desk' }).participants(assistant).store(store).build();
    const session = await desk.session({ id: 'tool-2' });
    const events = await collect(session.send('Refund me'));
    const [result] = ofType(events, 'tool.result');
    expect(result).toMatchObject({ toolName: 'ask_billing', isError: true });
    expect(result!.content).toContain('refunds needs an answer to "Which order?"');
    expect(session.pendingRequests).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
  });
});
