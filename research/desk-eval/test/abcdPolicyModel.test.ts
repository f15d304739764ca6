import { collectModelResponse, type ModelMessage, type ToolCall } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { createOfflineModels } from '@baton/example-support-desk/desk/deskModels.js';
import {
  AbcdPolicyModel,
  CASE_CLASSIFIER,
  CASE_CLASSIFIER_KIND,
  CASE_TRAINING_TEXTS,
  caseText,
  caseTrainingTexts,
  createTextClassifier,
  extractSlots,
  GUIDELINE_COPIES,
  guidelineTrainingTexts,
  loadConversations,
  loadGuidelines,
  type TextClassifier,
} from '@baton/support-desk-models';
import { beforeAll, describe, expect, it } from 'vitest';

const ontology = loadOntology();
let returns: AbcdPolicyModel;
const toolNames = [
  ...new Set(
    ontology.sequences.refund_initiate!.concat(ontology.sequences.return_size!, ontology.sequences.refund_update!),
  ),
  'request_user_input',
];
const tools = toolNames.map((name) => ({ name, description: name, parameters: {} }));

beforeAll(async () => {
  returns = createOfflineModels(await loadConversations(DEMO_DATA_FILE), ontology).specialist(
    'returns',
  ) as AbcdPolicyModel;
});

/** Runs the policy as the agent loop would, answering each tool call from `results`, until it asks or replies. */
async function step(messages: ModelMessage[]) {
  const response = await collectModelResponse(
    returns.stream({ messages: [{ role: 'system', content: 'Returns.' }, ...messages], tools, agent: 'returns' }),
  );
  return response;
}

const call = (toolCall: ToolCall, content: string): ModelMessage[] => [
  { role: 'assistant', agent: 'returns', content: '', toolCalls: [toolCall] },
  { role: 'tool', toolCallId: toolCall.id, toolName: toolCall.name, content },
];

describe('AbcdPolicyModel', () => {
  it("walks kb.json's sequence: asks for the name, pulls up the account, asks for what validation needs", async () => {
    const history: ModelMessage[] = [
      { role: 'user', content: 'The jacket I got is the wrong size, I want to return it' },
    ];
    const first = await step(history);
    expect(first.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['request_user_input', { prompt: 'May I have your full name or account ID?', case: 'return_size' }],
    ]);
    history.push(...call(first.toolCalls[0]!, 'Sure, it is Joyce Wu'));
    const second = await step(history);
    expect(second.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['pull-up-account', { customer_name: 'Joyce Wu' }],
    ]);
    history.push(...call(second.toolCalls[0]!, '{"log":"Account has been pulled up for Joyce Wu."}'));
    const third = await step(history);
    expect(third.toolCalls[0]!.name).toBe('request_user_input');
    expect(JSON.parse(third.toolCalls[0]!.arguments).prompt).toBe(
      'To validate the purchase, may I have your username, email address and order ID?',
    );
    history.push(...call(third.toolCalls[0]!, 'joycew123, joycew123@email.com, 1234567890'));
    const fourth = await step(history);
    expect(fourth.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['validate-purchase', { username: 'joycew123', email: 'joycew123@email.com', order_id: '1234567890' }],
    ]);
  });

  it('tries an action asked for in vain once with what it has (the account after four questions), gives it up when that fails, then replies with what it did', async () => {
    const history: ModelMessage[] = [
      { role: 'user', content: 'The jacket I got is the wrong size, I want to return it' },
    ];
    for (let i = 0; i < 4; i += 1) {
      const ask = await step(history);
      expect(ask.toolCalls[0]!.name).toBe('request_user_input');
      history.push(...call(ask.toolCalls[0]!, 'hmm'));
    }
    const tried = await step(history);
    expect(tried.toolCalls[0]!.name).toBe('pull-up-account');
    history.push(...call(tried.toolCalls[0]!, 'Error: give customer_name or account_id.'));
    const next = await step(history);
    expect(next.toolCalls[0]!.name).not.toBe('pull-up-account');
    let response = next;
    for (let guard = 0; guard < 20 && response.toolCalls.length > 0; guard += 1) {
      history.push(
        ...call(
          response.toolCalls[0]!,
          response.toolCalls[0]!.name === 'request_user_input' ? 'no idea' : 'Error: no account is pulled up.',
        ),
      );
      response = await step(history);
    }
    expect(response.toolCalls).toEqual([]);
    expect(response.text).toMatch(/I could not complete .*Is there anything else I can help you with\?$/);
  });

  it('streams its reply as text deltas', async () => {
    const deltas: string[] = [];
    await collectModelResponse(
      returns.stream({ messages: [{ role: 'user', content: 'refund' }], tools: [], agent: 'returns' }),
      (d) => deltas.push(d),
    );
    expect(deltas.length).toBeGreaterThan(1);
  });
});

describe('extractSlots', () => {
  it("finds ABCD's slot values in customer text", () => {
    expect(extractSlots('I believe my name is listed as David Williams.  The Account ID is 1VGSVKMH3K.')).toMatchObject(
      { customer_name: 'David Williams', account_id: '1VGSVKMH3K' },
    );
    expect(extractSlots('Yes.  The Order ID is 7488442726')).toMatchObject({ order_id: '7488442726' });
    expect(extractSlots('cminh1982@email.com and cminh1982')).toMatchObject({
      email: 'cminh1982@email.com',
      username: 'cminh1982',
    });
    expect(extractSlots('we are being charged $40 for it, I am a Gold member')).toMatchObject({
      amount: '40',
      membership_level: 'gold',
    });
    expect(extractSlots('I was charged the annual fee of 99$ twice')).toMatchObject({ amount: '99' });
    expect(extractSlots('great it is 84 dollars')).toMatchObject({ amount: '84' });
    expect(extractSlots('63449 and ph is 590-043-2523')).toMatchObject({ zip_code: '63449', phone: '590-043-2523' });
    expect(extractSlots('I can be reached at 354 854 3599.')).toMatchObject({ phone: '354 854 3599' });
    expect(extractSlots('(003) 635-6919')).toMatchObject({ phone: '(003) 635-6919' });
    expect(extractSlots('The shipping status says In Transit')).toMatchObject({ shipping_option: 'in transit' });
  });

  it('reads a bare number as a PIN only when a PIN was asked for', () => {
    expect(extractSlots("It's 22577").pin_number).toBeUndefined();
    expect(extractSlots("It's 22577", ['pin_number'])).toMatchObject({ pin_number: '22577' });
  });

  it('reads a bare number as the amount only when an amount was asked for', () => {
    expect(extractSlots('it was 45').amount).toBeUndefined();
    expect(extractSlots('it was 45', ['amount'])).toMatchObject({ amount: '45' });
    expect(extractSlots('order 7488442726', ['amount']).amount).toBeUndefined();
  });

  it('gives a text read again the same values in a new object, whatever a caller did to the one it got', () => {
    const first = extractSlots('my jeans from Guess, I am a silver member');
    expect(first).toEqual({ product: 'guess jeans', membership_level: 'silver' });
    first.product = 'tampered';
    delete first.membership_level;
    expect(extractSlots('my jeans from Guess, I am a silver member')).toEqual({
      product: 'guess jeans',
      membership_level: 'silver',
    });
    expect(extractSlots('my jeans from Guess, I am a silver member', ['pin_number'])).toEqual({
      product: 'guess jeans',
      membership_level: 'silver',
    });
  });
});

describe('a customer triage sent to the wrong specialist', () => {
  const withTriage = [...tools, { name: 'handoff_to_triage', description: 'back to triage', parameters: {} }];
  const ask = (messages: ModelMessage[]) =>
    collectModelResponse(
      returns.stream({
        messages: [{ role: 'system', content: 'Returns.' }, ...messages],
        tools: withTriage,
        agent: 'returns',
      }),
    );
  const forgot: ModelMessage = {
    role: 'user',
    content: 'I forgot my password and cannot log in to my account, I need to reset my password',
  };

  it("is handed back to triage, naming the flow the customer's words belong to, when they clearly belong to another specialist", async () => {
    const response = await ask([forgot]);
    expect(response.toolCalls.map((c) => c.name)).toEqual(['handoff_to_triage']);
    expect(JSON.parse(response.toolCalls[0]!.arguments).reason).toMatch(
      /^flow account_access, confidence (0\.9\d|1\.00)/,
    );
  });

  it('is handed back once: after a handoff back, the specialist works on the case it recognises', async () => {
    const back: ToolCall = {
      id: 'call_back',
      name: 'handoff_to_triage',
      arguments: JSON.stringify({ reason: 'flow account_access, confidence 0.95' }),
    };
    const response = await ask([
      forgot,
      { role: 'assistant', agent: 'returns', content: '', toolCalls: [back] },
      { role: 'tool', toolCallId: 'call_back', toolName: 'handoff_to_triage', content: 'handed off' },
    ]);
    expect(response.toolCalls.map((c) => c.name)).not.toContain('handoff_to_triage');
  });

  it('stays with a customer whose words are a case of its own', async () => {
    const response = await ask([{ role: 'user', content: 'The jacket I got is the wrong size, I want to return it' }]);
    expect(response.toolCalls.map((c) => c.name)).toEqual(['request_user_input']);
  });
});

describe('caseText', () => {
  it("reads the customer's messages up to the n-th that says anything, less their name and ids", () => {
    const texts = [
      'hi',
      'my jeans came in the wrong color',
      'Joyce Wu',
      'I want to return them',
      'my order ID is 1234567890',
      'silver',
    ];
    const slots = { customer_name: 'Joyce Wu', order_id: '1234567890' };
    // "hi" and the bare name say nothing, so they do not count; the name and the order ID are left out.
    expect(caseText(texts, slots, 1)).toBe('hi\nmy jeans came in the wrong color');
    expect(caseText(texts, slots, 2)).toBe('hi\nmy jeans came in the wrong color\n \nI want to return them');
    expect(caseText(texts, slots, 3)).toBe(
      'hi\nmy jeans came in the wrong color\n \nI want to return them\nmy order ID is  ',
    );
    expect(caseText(texts, slots)).toBe(caseText(texts, slots, 99));
    expect(caseText(texts, slots)).toBe(
      'hi\nmy jeans came in the wrong color\n \nI want to return them\nmy order ID is  \nsilver',
    );
    expect(caseText([], slots, 4)).toBe('');
  });
});

describe('a specialist reading the first messages that say anything (caseMessages)', () => {
  const opening: ModelMessage = { role: 'user', content: 'The jacket I got is the wrong size, I want to return it' };
  // A later answer that, read with the opening, sounds like another case of the same specialist.
  const later: ModelMessage = {
    role: 'user',
    content: 'where is my refund? what is the status of my refund, the refund is still pending',
  };
  let classifier: TextClassifier;
  beforeAll(async () => {
    const texts = [
      ...caseTrainingTexts(await loadConversations(DEMO_DATA_FILE), ontology, CASE_TRAINING_TEXTS),
      ...guidelineTrainingTexts(loadGuidelines(ontology), 'subflow', GUIDELINE_COPIES.cases),
    ];
    classifier = createTextClassifier(CASE_CLASSIFIER_KIND, texts, {
      ...CASE_CLASSIFIER,
      labels: ontology.subflows.product_defect ?? [],
    });
  });
  const caseAsked = async (caseMessages: number | undefined) => {
    const model = new AbcdPolicyModel({ agent: 'returns', classifier, ontology, caseMessages });
    const response = await collectModelResponse(
      model.stream({ messages: [{ role: 'system', content: 'Returns.' }, opening, later], tools, agent: 'returns' }),
    );
    return JSON.parse(response.toolCalls[0]!.arguments).case as string;
  };

  it('keeps the case of the opening when a later message would say another', async () => {
    expect(await caseAsked(1)).toBe('return_size');
    // Reading every message, the same specialist names another case: what reading the first ones changes.
    expect(await caseAsked(undefined)).not.toBe('return_size');
  });
});
