import { collectModelResponse, type ModelMessage, type ModelRequest, type ToolCall } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { SPECIALISTS, specialistForFlow } from '@baton/example-support-desk/desk/specialists.js';
import {
  type AbcdConversation,
  AbcdRouterModel,
  clarifyingQuestion,
  flowInReason,
  HOW_CAN_I_HELP,
  IDENTITY_QUESTION,
  loadConversations,
  NaiveBayesClassifier,
  openingText,
  ROUTER_CLASSIFIER,
  routerTrainingTexts,
  saysNeed,
  triageText,
} from '@baton/support-desk-models';
import { beforeAll, describe, expect, it } from 'vitest';
import { crossValidationFolds, foldOf } from '../src/folds.js';

let conversations: AbcdConversation[];
let router: AbcdRouterModel;
const tools = [...SPECIALISTS.map((s) => `handoff_to_${s.name}`), 'request_user_input'].map((name) => ({
  name,
  description: name,
  parameters: {},
}));
const request = (messages: ModelMessage[]): ModelRequest => ({
  messages: [{ role: 'system', content: 'Route.' }, ...messages],
  tools,
  agent: 'triage',
});
/** The customer's first message, triage's question about it, and the customer's answer. */
const answered = (first: string, call: ToolCall, answer: string): ModelRequest =>
  request([
    { role: 'user', content: first },
    { role: 'assistant', agent: 'triage', content: '', toolCalls: [call] },
    { role: 'tool', toolCallId: call.id, toolName: 'request_user_input', content: answer },
  ]);

beforeAll(async () => {
  conversations = await loadConversations(DEMO_DATA_FILE);
  const training = conversations.filter((c) => foldOf(c.id) !== 0);
  router = new AbcdRouterModel({
    classifier: new NaiveBayesClassifier(training.flatMap(routerTrainingTexts), ROUTER_CLASSIFIER),
    specialistFor: specialistForFlow,
  });
});

describe('AbcdRouterModel', () => {
  it('hands a clear request to the specialist of its flow, naming the flow in the reason', async () => {
    const response = await collectModelResponse(
      router.stream(request([{ role: 'user', content: 'I forgot my password and cannot log in to my account' }])),
    );
    expect(response.toolCalls).toHaveLength(1);
    expect(response.toolCalls[0]!.name).toBe('handoff_to_account');
    expect(
      flowInReason(JSON.parse(response.toolCalls[0]!.arguments).reason, ['account_access', 'manage_account']),
    ).toBe('account_access');
  });

  it('asks how it can help when the customer only greeted, then routes on what the answer says', async () => {
    const greeting = await collectModelResponse(router.stream(request([{ role: 'user', content: 'Hi there!' }])));
    expect(greeting.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: HOW_CAN_I_HELP }],
    ]);
    const call = greeting.toolCalls[0]!;
    const routed = await collectModelResponse(
      router.stream(answered('Hi there!', call, 'My package never arrived, where is my shipment?')),
    );
    expect(routed.toolCalls[0]!.name).toBe('handoff_to_orders');
  });

  it('gathers the opening when unsure: which topic, then the name or account, never the same question twice, then routes', async () => {
    const unsure = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 1.01,
    });
    const opening = 'I need help with my account';
    const first = await collectModelResponse(unsure.stream(request([{ role: 'user', content: opening }])));
    expect(first.toolCalls[0]!.name).toBe('request_user_input');
    expect(JSON.parse(first.toolCalls[0]!.arguments).prompt).toMatch(
      /^Could you tell me a little more\? Is it about .+, or about .+\?$/,
    );
    const second = await collectModelResponse(
      unsure.stream(answered(opening, first.toolCalls[0]!, 'it is about that')),
    );
    expect(second.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: IDENTITY_QUESTION }],
    ]);
    const messages = [...answered(opening, first.toolCalls[0]!, 'it is about that').messages];
    messages.push(
      { role: 'assistant', agent: 'triage', content: '', toolCalls: [{ ...second.toolCalls[0]!, id: 'call_2' }] },
      { role: 'tool', toolCallId: 'call_2', toolName: 'request_user_input', content: 'Joyce Wu' },
    );
    // Without extra questions when torn, after its two questions it routes on its best guess, even below its thresholds.
    const strict = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 1.01,
      maxQuestionsTorn: 0,
    });
    const routedAfterTwo = await collectModelResponse(strict.stream({ ...request([]), messages }));
    expect(routedAfterTwo.toolCalls[0]!.name).toMatch(/^handoff_to_/);
    // Still torn (below minConfidence) after two questions: one more which-topic question (maxQuestionsTorn, default 1) ...
    const third = await collectModelResponse(unsure.stream({ ...request([]), messages }));
    expect(third.toolCalls.map((c) => c.name)).toEqual(['request_user_input']);
    expect(JSON.parse(third.toolCalls[0]!.arguments).prompt).toMatch(/^Could you tell me a little more/);
    messages.push(
      { role: 'assistant', agent: 'triage', content: '', toolCalls: [{ ...third.toolCalls[0]!, id: 'call_3' }] },
      { role: 'tool', toolCallId: 'call_3', toolName: 'request_user_input', content: 'my password does not work' },
    );
    // ... and then it routes, on all the customer said.
    const fourth = await collectModelResponse(unsure.stream({ ...request([]), messages }));
    expect(fourth.toolCalls[0]!.name).toBe('handoff_to_account');
  });

  it('asks the extra question only while torn, and never the question it asked last', async () => {
    // After the name question, a guess between 0.5 and routeConfidence routes at once; below 0.5 it asks which topic.
    const confident = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 0,
      maxQuestions: 1,
    });
    const opening = 'I need help with my account';
    const asked = await collectModelResponse(confident.stream(request([{ role: 'user', content: opening }])));
    expect(JSON.parse(asked.toolCalls[0]!.arguments).prompt).toBe(IDENTITY_QUESTION);
    const routed = await collectModelResponse(confident.stream(answered(opening, asked.toolCalls[0]!, 'Joyce Wu')));
    expect(routed.toolCalls[0]!.name).toMatch(/^handoff_to_/);
    const torn = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 1.01,
      maxQuestions: 1,
    });
    const first = await collectModelResponse(torn.stream(request([{ role: 'user', content: opening }])));
    const which = JSON.parse(first.toolCalls[0]!.arguments).prompt as string;
    expect(which).toMatch(/^Could you tell me a little more\? Is it about/);
    // The answer says nothing new, so its two likeliest topics stay the same: it asks in other words, not the same question again.
    const second = await collectModelResponse(torn.stream(answered(opening, first.toolCalls[0]!, 'yes')));
    expect(second.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: 'Could you tell me a little more about what you need?' }],
    ]);
  });

  it('asks for the name or account when its guess is not sure enough to route, then routes on it', async () => {
    const gathering = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 0,
    });
    const opening = 'I was charged twice for my order';
    const asked = await collectModelResponse(gathering.stream(request([{ role: 'user', content: opening }])));
    expect(asked.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: IDENTITY_QUESTION }],
    ]);
    const routed = await collectModelResponse(gathering.stream(answered(opening, asked.toolCalls[0]!, 'Crystal Minh')));
    expect(routed.toolCalls[0]!.name).toBe('handoff_to_billing');
  });

  it('still unsure after the name (below clarifyBelow), asks which of its two likeliest topics, names them, then routes on the answer', async () => {
    const clarifying = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 0,
      clarifyBelow: 1.01,
    });
    const opening = 'I was charged twice for my order';
    const asked = await collectModelResponse(clarifying.stream(request([{ role: 'user', content: opening }])));
    expect(asked.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: IDENTITY_QUESTION }],
    ]);
    const named = answered(opening, asked.toolCalls[0]!, 'Crystal Minh');
    const which = await collectModelResponse(clarifying.stream(named));
    const guess = router.classifier.classify(opening)!;
    const [a, b] = guess.probabilities;
    expect(which.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: clarifyingQuestion([a!.label, b!.label]) }],
    ]);
    const messages = [
      ...named.messages,
      {
        role: 'assistant' as const,
        agent: 'triage',
        content: '',
        toolCalls: [{ ...which.toolCalls[0]!, id: 'call_2' }],
      },
      {
        role: 'tool' as const,
        toolCallId: 'call_2',
        toolName: 'request_user_input',
        content: 'a charge I dispute, on my bill',
      },
    ];
    // Its two questions asked (maxQuestions), it routes.
    const routed = await collectModelResponse(clarifying.stream({ ...request([]), messages }));
    expect(routed.toolCalls[0]!.name).toBe('handoff_to_billing');
    // With clarifyBelow 0 (the default) it routes after the name.
    const routing = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 0,
    });
    expect((await collectModelResponse(routing.stream(named))).toolCalls[0]!.name).toBe('handoff_to_billing');
  });

  it('routes on what the customer said about their need: an answer that only gives their name and ids weighs nothing', async () => {
    const gathering = new AbcdRouterModel({
      classifier: router.classifier,
      specialistFor: specialistForFlow,
      routeConfidence: 1.01,
      minConfidence: 0,
      maxQuestions: 1,
    });
    const opening = 'I need you to check on my refund';
    const asked = await collectModelResponse(gathering.stream(request([{ role: 'user', content: opening }])));
    expect(asked.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: IDENTITY_QUESTION }],
    ]);
    const alone = router.classifier.classify(opening)!;
    const answers = [
      'Username: rdomingo631, email address rdomingo631@email.com',
      'Order ID: 6862310275',
      'My account ID is EXT2LVWHXY',
    ];
    for (const answer of answers) {
      const routed = await collectModelResponse(gathering.stream(answered(opening, asked.toolCalls[0]!, answer)));
      expect(routed.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
        [
          `handoff_to_${specialistForFlow(alone.label)}`,
          { reason: `flow ${alone.label}, confidence ${alone.confidence.toFixed(2)}` },
        ],
      ]);
    }
    // An answer that says more of the need is read with the opening.
    const more = await collectModelResponse(
      gathering.stream(answered(opening, asked.toolCalls[0]!, 'I returned the jeans two weeks ago')),
    );
    expect(JSON.parse(more.toolCalls[0]!.arguments).reason).not.toBe(
      `flow ${alone.label}, confidence ${alone.confidence.toFixed(2)}`,
    );
  });

  it('hands back to the specialist already on the case', async () => {
    const response = await collectModelResponse(
      router.stream(
        request([
          { role: 'user', content: 'My jeans have a stain' },
          { role: 'assistant', agent: 'returns', content: 'Sorry about that!' },
          { role: 'user', content: 'ok thanks' },
        ]),
      ),
    );
    expect(response.toolCalls[0]).toMatchObject({ name: 'handoff_to_returns' });
  });

  it('is deterministic: the same input gives the same tool call, id included', async () => {
    const input = request([{ role: 'user', content: 'I want to cancel my subscription bill' }]);
    const [a, b] = await Promise.all([
      collectModelResponse(router.stream(input)),
      collectModelResponse(router.stream(input)),
    ]);
    expect(a.toolCalls).toEqual(b.toolCalls);
  });
});

describe('what triage reads', () => {
  it('tells a message about the need from one that only says who the customer is', () => {
    expect(
      ['Order ID: 6862310275', 'my username and email address', 'my account id', 'hi', 'yes'].map(saysNeed),
    ).toEqual([false, false, false, false, false]);
    expect(
      ['I returned it a while ago', 'my promo code does not work', 'I want to change my address'].map(saysNeed),
    ).toEqual([true, true, true]);
  });

  it('reads the messages about the need, less the name and ids, and all of them when none says one', () => {
    expect(
      triageText(['I need to check on my refund', 'Order ID: 6862310275', 'it was the jeans'], {
        order_id: '6862310275',
      }),
    ).toBe('I need to check on my refund\nit was the jeans');
    expect(
      triageText(['hi', 'Joyce Wu, account QW12ER34TY'], { customer_name: 'Joyce Wu', account_id: 'QW12ER34TY' }),
    ).toBe('hi\n , account  ');
    expect(triageText([], {})).toBe('');
  });
});

describe('cross-validation folds', () => {
  it('split the conversations into 5 disjoint folds, stable by id', () => {
    const folds = crossValidationFolds(conversations);
    expect(folds).toHaveLength(5);
    expect(folds.reduce((n, f) => n + f.test.length, 0)).toBe(conversations.length);
    for (const fold of folds) {
      expect(fold.test.length).toBeGreaterThan(0);
      expect(fold.train.length + fold.test.length).toBe(conversations.length);
      expect(fold.test.every((c) => foldOf(c.id) === fold.fold && !fold.train.includes(c))).toBe(true);
    }
    expect(foldOf('demo-001')).toBe(foldOf('demo-001'));
    expect(foldOf('abcd-dev-0061')).toBe(2);
  });

  it('route most held-out openings to the right specialist (learned from the other folds)', () => {
    let right = 0;
    for (const { train, test } of crossValidationFolds(conversations)) {
      const classifier = new NaiveBayesClassifier(train.flatMap(routerTrainingTexts), ROUTER_CLASSIFIER);
      for (const c of test)
        if (specialistForFlow(classifier.classify(openingText(c))?.label ?? '') === specialistForFlow(c.flow))
          right += 1;
    }
    // Chance is about 1 in 6; a router that learned nothing would sit far below this.
    expect(right / conversations.length).toBeGreaterThan(0.7);
  });

  it('passes a case a specialist handed back to the specialist of the flow it named, and to no one else', async () => {
    const flows = loadOntology().flows;
    const withFlows = new AbcdRouterModel({ classifier: router.classifier, specialistFor: specialistForFlow, flows });
    const back = (reason: string): ModelRequest =>
      request([
        { role: 'user', content: 'I forgot my password' },
        {
          role: 'assistant',
          agent: 'returns',
          content: '',
          toolCalls: [{ id: 'call_back', name: 'handoff_to_triage', arguments: JSON.stringify({ reason }) }],
        },
        { role: 'tool', toolCallId: 'call_back', toolName: 'handoff_to_triage', content: 'handed off' },
      ]);
    const passed = await collectModelResponse(withFlows.stream(back('flow account_access, confidence 0.95')));
    expect(passed.toolCalls.map((c) => [c.name, JSON.parse(c.arguments).reason])).toEqual([
      ['handoff_to_account', 'flow account_access, confidence 0.95'],
    ]);
    // A reason naming no flow, or the flow of the specialist that handed it back: back to that specialist.
    for (const reason of ['not mine', 'flow product_defect, confidence 0.95']) {
      const kept = await collectModelResponse(withFlows.stream(back(reason)));
      expect(kept.toolCalls.map((c) => c.name)).toEqual(['handoff_to_returns']);
    }
  });
});
