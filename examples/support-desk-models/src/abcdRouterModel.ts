import type { ModelClient, ModelRequest, ModelStreamEvent } from '@baton/core';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import type { FlowClassifier } from './averagedClassifier.js';
import { type ViewedCall, viewConversation } from './conversationView.js';
import { type ModelDecision, streamDecision } from './decisionStream.js';
import { TRIAGE } from './ontology.js';
import type { SlotValues } from './slotExtraction.js';
import type { Classification } from './textClassifier.js';
import { textFeatures } from './textFeatures.js';

/** Options of {@link AbcdRouterModel}. */
export interface AbcdRouterModelOptions {
  /** Classifies customer text into an ABCD flow (trained on other conversations' opening text), with calibrated confidence. */
  classifier: FlowClassifier;
  /** The specialist (agent name) that covers a flow. */
  specialistFor: (flow: string) => string | undefined;
  /**
   * The flows a specialist may name when it hands a case back (`flow <flow>` in its reason), to be
   * routed to that flow's specialist (default none: a case handed back returns to its specialist).
   */
  flows?: readonly string[];
  /** The coordinator's own agent name (default `'triage'`). */
  self?: string;
  /**
   * Below this calibrated confidence (0–1) triage's question names its two likeliest topics
   * (default 0.5: its best guess is no more likely right than wrong).
   */
  minConfidence?: number;
  /**
   * At or above this calibrated confidence (0–1) triage routes at once; below it, it gathers more of
   * the opening with a question first (default 0.8: chosen, with `maxQuestions`, by nested
   * cross-validation of a simulation of this policy, `scripts/triageCv.ts`).
   */
  routeConfidence?: number;
  /** The most questions triage asks before it routes on its best guess (default 2). */
  maxQuestions?: number;
  /**
   * Questions triage may ask beyond `maxQuestions` while it is still torn: its calibrated confidence
   * below `minConfidence` after its first question. Each is a which-topic question
   * ({@link clarifyingQuestion}), never the question it asked last, so the customer always answers in
   * between (default 1; 0: none).
   */
  maxQuestionsTorn?: number;
  /**
   * Below this calibrated confidence (0–1), once the customer has answered the name-or-account question, triage asks
   * which of its two likeliest topics the need is about ({@link clarifyingQuestion}), if it has not asked that yet and
   * a question of its `maxQuestions` remains, instead of routing on its guess (default 0: it routes).
   */
  clarifyBelow?: number;
  /**
   * What triage classifies of the customer's messages so far, given the name and ids found in them (default
   * {@link triageText}: the messages that say anything about the need, less the name and ids).
   */
  read?: (messages: readonly string[], slots: SlotValues) => string;
}

/** The question triage asks for the customer's identity while it gathers the opening, as ABCD's agents do before their first action. */
export const IDENTITY_QUESTION =
  'I can help with that. So that I can pull up your account, may I have your full name or account ID?';

/** The question the router asks when the customer has not said what they need yet. */
export const HOW_CAN_I_HELP = 'Hello, thank you for contacting AcmeCorp! How can I help you today?';

/** What each ABCD flow is about, in a customer's words (for the clarifying question). */
const FLOW_TOPICS: Record<string, string> = {
  account_access: 'getting into your account',
  manage_account: 'changing your account details',
  order_issue: 'an order you placed',
  product_defect: 'a return or refund',
  purchase_dispute: 'a charge or price you dispute',
  shipping_issue: 'a delivery',
  single_item_query: 'a question about an item',
  storewide_query: 'a question about our store policies',
  subscription_inquiry: 'your subscription',
  troubleshoot_site: 'a problem with our website',
};

/**
 * The clarifying question triage asks when it is unsure between its two likeliest flows.
 * @example
 * ```ts
 * clarifyingQuestion(['order_issue', 'shipping_issue']); // 'Could you tell me a little more? Is it about an order you placed, or about a delivery?'
 * ```
 */
export function clarifyingQuestion(flows: readonly string[]): string {
  const topics = flows.slice(0, 2).map((flow) => FLOW_TOPICS[flow] ?? flow.replace(/_/g, ' '));
  return topics.length < 2
    ? 'Could you tell me a little more about what you need?'
    : `Could you tell me a little more? Is it about ${topics[0]}, or about ${topics[1]}?`;
}

/**
 * The flow a router named in a handoff reason (`"flow order_issue, …"`), or `undefined`.
 *
 * @param reason a handoff's reason
 * @param flows the flows it may name
 * @returns the first of `flows` the reason names as a whole word
 * @example
 * ```ts
 * flowInReason('flow order_issue, confidence 0.71', ontology.flows); // 'order_issue'
 * ```
 */
export function flowInReason(reason: string | undefined, flows: readonly string[]): string | undefined {
  if (reason === undefined) return undefined;
  return flows.find((flow) => new RegExp(`\\b${flow}\\b`).test(reason));
}

/** The slots that say who the customer is, not what they need. */
const IDENTITY_SLOTS = ['customer_name', 'account_id', 'order_id', 'username', 'email'] as const;

/**
 * The text with the customer's name and ids (as extracted from their answers) left out: what a
 * classifier of the customer's need should read.
 */
export function withoutIdentity(text: string, slots: SlotValues): string {
  let rest = text;
  for (const slot of IDENTITY_SLOTS) {
    const value = slots[slot];
    if (value !== undefined && value.length > 1) rest = rest.split(value).join(' ');
  }
  return rest;
}

/**
 * The words (as {@link textFeatures} stems them) of an answer to "may I have your name or account ID?": a message
 * whose content words are all among them says who the customer is, not what they need.
 */
const IDENTITY_WORDS: ReadonlySet<string> = new Set([
  'name',
  'usernam',
  'email',
  'address',
  'account',
  'acct',
  'id',
  'order',
  'zip',
  'code',
  'phone',
  'number',
  'com',
]);

/**
 * Whether a customer message says anything about their need: a content word other than those of a name or id
 * answer ("Username: joyce12, email joyce12@email.com" says nothing; "hi" neither). Read it less the customer's name
 * and ids ({@link withoutIdentity}).
 *
 * @example
 * ```ts
 * saysNeed('Order ID: 6862310275'); // false
 * saysNeed('I returned it a while ago'); // true
 * ```
 */
export function saysNeed(text: string): boolean {
  return textFeatures(text).some((feature) => !feature.includes('_') && !IDENTITY_WORDS.has(feature));
}

/**
 * What triage classifies: the customer's messages that say anything about their need ({@link saysNeed}), less
 * their name and ids ({@link withoutIdentity}), joined by newlines; all of them when none does. A message that only
 * answers "your name or account ID?" weighs nothing, so it cannot tip the flow towards the accounts its words name.
 * Chosen by nested cross-validation of a simulation of triage (`scripts/triageReadCv.ts`).
 *
 * @param messages the customer's messages so far, in order
 * @param slots the name and ids found in them
 * @returns the text to classify (`''` for no messages)
 * @example
 * ```ts
 * triageText(['I need to check on my refund', 'Order ID: 6862310275'], { order_id: '6862310275' }); // 'I need to check on my refund'
 * ```
 */
export function triageText(messages: readonly string[], slots: SlotValues): string {
  const words = messages.map((message) => withoutIdentity(message, slots));
  const need = words.filter(saysNeed);
  return (need.length > 0 ? need : words).join('\n');
}

/**
 * The triage coordinator's offline model: a deterministic router learned from data. It classifies
 * everything the customer said so far (the opening turns together) with a calibrated naive Bayes
 * classifier and answers with a `handoff_to_<specialist>` tool call whose reason names the flow
 * (`flow order_issue, confidence 0.71`). Like a human agent it waits for the intent: when the
 * customer has only greeted, or its confidence is below `minConfidence`, it asks one short question
 * with `request_user_input` (the customer's next message answers it) and then routes on all their
 * words; it never asks twice in a row. Once a specialist has spoken, it hands back to that
 * specialist, unless that specialist just handed the case back naming another of `flows`: then to
 * that flow's specialist. It reads nothing but the request's messages, so replays are deterministic.
 *
 * @example
 * ```ts
 * const model = new AbcdRouterModel({ classifier, specialistFor: specialistForFlow });
 * const triage = agent({ name: 'triage', description: 'Routes customers.', instructions: '…', model });
 * ```
 */
export class AbcdRouterModel implements ModelClient {
  readonly model = 'abcd-router-nb';
  readonly #options: AbcdRouterModelOptions;

  constructor(options: AbcdRouterModelOptions) {
    this.#options = options;
  }

  /** The flow classifier it routes with. */
  get classifier(): FlowClassifier {
    return this.#options.classifier;
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
    // A specialist that handed the case back naming another flow (`flow order_issue, …`): to that flow's specialist.
    const back = view.calls.at(-1);
    const backTo =
      back?.name === `handoff_to_${self}`
        ? this.#options.specialistFor(flowInReason(String(back.args.reason ?? ''), this.#options.flows ?? []) ?? '')
        : undefined;
    if (backTo !== undefined && backTo !== back?.agent && offered.has(`handoff_to_${backTo}`)) {
      return { type: 'tool', id, name: `handoff_to_${backTo}`, args: { reason: String(back?.args.reason) } };
    }
    if (current !== undefined && offered.has(`handoff_to_${current}`)) {
      return { type: 'tool', id, name: `handoff_to_${current}`, args: { reason: `continuing with ${current}` } };
    }
    // The opening turns together: what the customer said so far about their need, less who they are (a name or an id says nothing about the need).
    const result = this.#options.classifier.classify(
      (this.#options.read ?? triageText)(view.customerTexts, view.slots),
    );
    const question = this.#nextQuestion(
      view.calls.filter((call) => call.agent === self),
      result,
    );
    if (question !== undefined && offered.has(REQUEST_USER_INPUT))
      return { type: 'tool', id, name: REQUEST_USER_INPUT, args: { prompt: question } };
    if (result === undefined)
      return { type: 'text', text: 'Could you tell me in a few words what you need help with?' };
    const target = this.#options.specialistFor(result.label);
    if (target === undefined || !offered.has(`handoff_to_${target}`)) {
      return {
        type: 'text',
        text: `I understand this is about ${result.label.replace(/_/g, ' ')}, but no colleague of mine handles that here.`,
      };
    }
    return {
      type: 'tool',
      id,
      name: `handoff_to_${target}`,
      args: { reason: `flow ${result.label}, confidence ${result.confidence.toFixed(2)}` },
    };
  }

  /**
   * The question triage asks before routing, or `undefined` to route now. It gathers the opening as
   * ABCD's agents do before their first action: no intent yet, it asks how it can help; torn between
   * two topics (below `minConfidence`), which of them (once); not sure enough to route
   * (below `routeConfidence`), the customer's name or account (once); never the question it asked
   * last, and at most `maxQuestions` in all, then up to `maxQuestionsTorn` more which-topic questions
   * while still below `minConfidence` (then it routes on its best guess).
   */
  #nextQuestion(mine: readonly ViewedCall[], result: Classification | undefined): string | undefined {
    const asked = mine.filter((call) => call.name === REQUEST_USER_INPUT).map((call) => String(call.args.prompt ?? ''));
    const last = mine.at(-1)?.name === REQUEST_USER_INPUT ? asked.at(-1) : undefined;
    const maxQuestions = this.#options.maxQuestions ?? 2;
    if (result === undefined)
      return asked.length > maxQuestions ? undefined : [HOW_CAN_I_HELP, IDENTITY_QUESTION].find((q) => q !== last);
    if (result.confidence >= (this.#options.routeConfidence ?? 0.8)) return undefined;
    const [a, b] = result.probabilities;
    const minConfidence = this.#options.minConfidence ?? 0.5;
    if (asked.length >= maxQuestions) {
      // Still torn after its questions: one more which-topic question (never the one it asked last), up to maxQuestionsTorn.
      const extra =
        asked.length < maxQuestions + (this.#options.maxQuestionsTorn ?? 1) &&
        result.confidence < minConfidence &&
        asked.length >= 1;
      const question = clarifyingQuestion(b === undefined ? [] : [a!.label, b.label]);
      const fallback = clarifyingQuestion([]);
      return extra ? [question, fallback].find((q) => q !== last) : undefined;
    }
    const torn = result.confidence < minConfidence && b !== undefined && a!.probability + b.probability >= 0.6;
    const clarified = asked.some((q) => q.startsWith(clarifyingQuestion([]).slice(0, 20)));
    if (torn && !clarified) return clarifyingQuestion([a!.label, b.label]);
    if (!asked.includes(IDENTITY_QUESTION)) return IDENTITY_QUESTION;
    // Still unsure after the name or account: which of its two likeliest topics, once.
    const unsure = result.confidence < (this.#options.clarifyBelow ?? 0) && b !== undefined;
    return unsure && !clarified ? clarifyingQuestion([a!.label, b.label]) : undefined;
  }
}
