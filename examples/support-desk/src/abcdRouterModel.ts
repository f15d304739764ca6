import type { ModelClient, ModelRequest, ModelStreamEvent } from '@baton/core';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import { viewConversation } from './conversationView.js';
import { type ModelDecision, streamDecision } from './decisionStream.js';
import { TRIAGE } from './specialists.js';
import type { NearestNeighbourClassifier } from './textClassifier.js';

/** Options of {@link AbcdRouterModel}. */
export interface AbcdRouterModelOptions {
  /** Classifies customer text into an ABCD flow (trained on other conversations' opening text). */
  classifier: NearestNeighbourClassifier;
  /** The specialist (agent name) that covers a flow. */
  specialistFor: (flow: string) => string | undefined;
  /** The coordinator's own agent name (default `'triage'`). */
  self?: string;
  /** How often to ask "how can I help?" before answering in text (default 3). */
  maxQuestions?: number;
}

/** The question the router asks when the customer has not said what they need yet. */
export const HOW_CAN_I_HELP = 'Hello, thank you for contacting AcmeCorp! How can I help you today?';

/**
 * The flow a router named in a handoff reason (`"flow order_issue, …"`), or `undefined`.
 *
 * @param reason a handoff's reason
 * @param flows the flows it may name
 * @returns the first of `flows` the reason names as a whole word
 * @example
 * ```ts
 * flowInReason('flow order_issue, 0.71 of the vote', ontology.flows); // 'order_issue'
 * ```
 */
export function flowInReason(reason: string | undefined, flows: readonly string[]): string | undefined {
  if (reason === undefined) return undefined;
  return flows.find((flow) => new RegExp(`\\b${flow}\\b`).test(reason));
}

/**
 * The triage coordinator's offline model: a deterministic router learned from data. It classifies
 * everything the customer said so far with a nearest-neighbour classifier and answers with a
 * `handoff_to_<specialist>` tool call whose reason names the flow (`flow order_issue, 0.71 of the
 * vote`). When the customer has only greeted, it calls `request_user_input` asking how it can help
 * and routes on the accumulated text. Once a specialist has spoken, it hands back to that
 * specialist. It reads nothing but the request's messages, so replays are deterministic.
 *
 * @example
 * ```ts
 * const model = new AbcdRouterModel({ classifier, specialistFor: specialistForFlow });
 * const triage = agent({ name: 'triage', description: 'Routes customers.', instructions: '…', model });
 * ```
 */
export class AbcdRouterModel implements ModelClient {
  readonly model = 'abcd-router-knn';
  readonly #options: AbcdRouterModelOptions;

  constructor(options: AbcdRouterModelOptions) {
    this.#options = options;
  }

  /** Streams the router's decision ({@link decide}) the way a real model streams its answer. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return streamDecision(this.decide(request));
  }

  /** The router's decision for a request (what `stream` streams). */
  decide(request: ModelRequest): ModelDecision {
    const self = this.#options.self ?? TRIAGE;
    const view = viewConversation(request.messages);
    const offered = new Set(request.tools.map((t) => t.name));
    const id = `call_${self}_${view.digest}`;
    const current = view.speakers.filter((name) => name !== self).at(-1);
    if (current !== undefined && offered.has(`handoff_to_${current}`)) {
      return { type: 'tool', id, name: `handoff_to_${current}`, args: { reason: `continuing with ${current}` } };
    }
    const result = this.#options.classifier.classify(view.customerTexts.join('\n'));
    const asked = view.calls.filter((call) => call.agent === self && call.name === REQUEST_USER_INPUT).length;
    if (result === undefined) {
      if (offered.has(REQUEST_USER_INPUT) && asked < (this.#options.maxQuestions ?? 3)) {
        return { type: 'tool', id, name: REQUEST_USER_INPUT, args: { prompt: HOW_CAN_I_HELP } };
      }
      return { type: 'text', text: 'Could you tell me a little more about what you need help with?' };
    }
    const target = this.#options.specialistFor(result.label);
    if (target === undefined || !offered.has(`handoff_to_${target}`)) {
      return { type: 'text', text: `I understand this is about ${result.label.replace(/_/g, ' ')}, but no colleague of mine handles that here.` };
    }
    return { type: 'tool', id, name: `handoff_to_${target}`, args: { reason: `flow ${result.label}, ${result.confidence.toFixed(2)} of the vote` } };
  }
}
