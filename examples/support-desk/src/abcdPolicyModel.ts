import type { ModelClient, ModelRequest, ModelStreamEvent } from '@baton/core';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import { viewConversation } from './conversationView.js';
import { type ModelDecision, streamDecision } from './decisionStream.js';
import type { Ontology } from './ontology.js';
import { decideNextStep } from './specialistPolicy.js';

/** The name of the tool that closes a conversation (`endConversationTool` of `@baton/memory`). */
const END_CONVERSATION = 'end_conversation';

import type { NaiveBayesClassifier } from './textClassifier.js';

/** Options of {@link AbcdPolicyModel}. */
export interface AbcdPolicyModelOptions {
  /** The specialist's agent name. */
  agent: string;
  /** Classifies customer text into one of the specialist's subflows (calibrated naive Bayes). */
  classifier: NaiveBayesClassifier;
  ontology: Ontology;
}

/**
 * A specialist's offline model: it recognises the subflow within its flows (a calibrated naive Bayes
 * classifier over everything the customer said so far), then walks kb.json's
 * action sequence for that subflow (see `decideNextStep`): it calls each console action with the
 * slot values the customer gave, asks for missing ones with `request_user_input` the way ABCD's
 * agents ask for a name, account ID or order ID, and finishes with a reply to the customer that names
 * the case (`case refund_initiate`); when the customer then says goodbye it calls `end_conversation`.
 * It reads nothing but the request's messages, so replays are deterministic.
 *
 * @example
 * ```ts
 * const model = new AbcdPolicyModel({ agent: 'returns', classifier, ontology });
 * ```
 */
export class AbcdPolicyModel implements ModelClient {
  readonly model = 'abcd-policy-kb';
  readonly #options: AbcdPolicyModelOptions;

  constructor(options: AbcdPolicyModelOptions) {
    this.#options = options;
  }

  /** Streams the specialist's decision ({@link decide}) the way a real model streams its answer. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return streamDecision(this.decide(request));
  }

  /** The specialist's decision for a request (what `stream` streams). */
  decide(request: ModelRequest): ModelDecision {
    const { agent, classifier, ontology } = this.#options;
    const view = viewConversation(request.messages);
    const id = `call_${agent}_${view.digest}`;
    // The case is recognised from the conversation so far: every answer may tell more (an item, a refund, a bill).
    const subflow = classifier.classify(view.customerTexts.join('\n'))?.label;
    if (subflow === undefined) return { type: 'text', text: 'Could you tell me more about the problem?' };
    const decision = decideNextStep(view, {
      agent,
      flow: ontology.flowOf(subflow) ?? '',
      subflow,
      sequence: ontology.sequences[subflow] ?? [],
      slotsOf: (action) => ontology.actions.get(action)?.slots ?? [],
    });
    const offered = new Set(request.tools.map((t) => t.name));
    switch (decision.type) {
      case 'call':
        if (!offered.has(decision.name)) return { type: 'text', text: `I would ${decision.name.replace(/-/g, ' ')} now, but I do not have that tool.` };
        return { type: 'tool', id, name: decision.name, args: decision.args };
      case 'ask':
        return offered.has(REQUEST_USER_INPUT) ? { type: 'tool', id, name: REQUEST_USER_INPUT, args: { prompt: decision.prompt } } : { type: 'text', text: decision.prompt };
      case 'reply':
        return { type: 'text', text: decision.text };
      case 'end':
        return offered.has(END_CONVERSATION) ? { type: 'tool', id, name: END_CONVERSATION, args: { reason: decision.reason } } : { type: 'text', text: 'Thank you for contacting AcmeCorp. Goodbye!' };
    }
  }
}
