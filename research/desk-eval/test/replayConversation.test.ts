import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';
import { caseOfQuestion, sessionIdFor } from '../src/replayConversation.js';
import { runReplay } from '../src/runReplay.js';

// A conversation written by hand in ABCD's format, with an id that cannot be a session id as it is.
const mine: AbcdConversation = {
  id: 'my chat #1',
  flow: 'shipping_issue',
  subflow: 'status',
  turns: [
    { role: 'agent', text: 'Hi, how can I help?' },
    { role: 'customer', text: 'hello' },
    { role: 'customer', text: 'my package has not arrived yet, where is my shipment?' },
    { role: 'customer', text: 'David Williams' },
    { role: 'customer', text: 'thanks, bye' },
  ],
};

describe('replaying any conversation of the format', () => {
  it('gives an unsafe id a stable safe session id', () => {
    expect(sessionIdFor('abcd-dev-0061')).toBe('abcd-dev-0061');
    expect(sessionIdFor('my chat #1')).toMatch(/^conversation-[0-9a-f]{24}$/);
    expect(sessionIdFor('my chat #1')).toBe(sessionIdFor('my chat #1'));
  });

  it('asks a greeting customer how to help, routes on the answer and stores the session under the safe id', async () => {
    const report = await runReplay({
      conversations: [mine],
      training: await loadConversations(DEMO_DATA_FILE),
      ontology: loadOntology(),
      deskStore: chooseDeskStore({ directory: ':memory:' }),
    });
    const [outcome] = report.conversations;
    // "hello" → triage asks how it can help, answered by the next message; orders then asks for the
    // name (answered: "David Williams") and for the ids verification needs (answered: "thanks, bye"),
    // and asks again; that last question is still pending when the customer has no more messages, and
    // the case that question names is the one counted (the demo's classifier reads "has not arrived" as a
    // missing item, not the shipping status: a wrong case, counted as one).
    expect(outcome).toMatchObject({ id: 'my chat #1', routedTo: 'orders', answers: 3, predictedSubflow: 'missing' });
    expect(report.casework.subflow).toMatchObject({ correct: 0, total: 1 });
    expect(report.counts).toMatchObject({ conversations: 1, turns: 4, episodes: 1, userInputRequests: 4 });
    expect(report.routing.specialist).toMatchObject({ correct: 1, total: 1, accuracy: 1 });
  });

  it("reads the case a specialist's question names, and none from arguments that are not JSON or name none", () => {
    expect(caseOfQuestion('{"prompt":"May I have your order ID?","case":"refund_initiate"}')).toBe(
      'case refund_initiate',
    );
    expect(caseOfQuestion('{"prompt":"May I have your order ID?"}')).toBeUndefined();
    expect(caseOfQuestion('{"prompt":"May I have your order ID?","case":7}')).toBeUndefined();
    expect(caseOfQuestion('{"prompt":')).toBeUndefined();
  });
});
