import type { ModelClient, ModelRequest, ModelStreamEvent } from '@baton/core';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import { withoutIdentity } from './abcdRouterModel.js';
import { type ConversationView, viewConversation } from './conversationView.js';
import { type ModelDecision, streamDecision } from './decisionStream.js';
import { GUIDELINE_SLOTS, type Ontology, TRIAGE } from './ontology.js';
import type { SlotValues } from './slotExtraction.js';
import { caseLabel, decideNextStep } from './specialistPolicy.js';
import type { Classification, TextClassifier } from './textClassifier.js';
import { hasContent } from './textFeatures.js';

/** The name of the tool that closes a conversation (`endConversationTool` of `@baton/memory`). */
const END_CONVERSATION = 'end_conversation';

/** Options of {@link AbcdPolicyModel}. */
export interface AbcdPolicyModelOptions {
  /** The specialist's agent name. */
  agent: string;
  /** Classifies customer text into one of the specialist's subflows (calibrated naive Bayes). */
  classifier: TextClassifier;
  ontology: Ontology;
  /**
   * Classifies customer text into any flow, with calibrated probabilities: when the flows of another
   * specialist hold at least `rerouteConfidence` of them, the case is handed back to triage
   * (`handoff_to_triage`, reason `flow <flow>, confidence <p>`) to go to that specialist, once per
   * conversation (default: never).
   */
  anyFlow?: TextClassifier | undefined;
  /** The specialist (agent name) that covers a flow; needed with `anyFlow`. */
  specialistFor?: (flow: string) => string | undefined;
  /** See `anyFlow` (default 0.9). */
  rerouteConfidence?: number;
  /**
   * How many of the customer's first messages the case is recognised from (default: all of them). The
   * messages after them mostly answer the specialist's questions (an order ID, a membership level, "yes"),
   * which say little about the case.
   */
  caseMessages?: number | undefined;
}

/**
 * A specialist's offline model: it recognises the subflow within its flows (a calibrated naive Bayes
 * classifier over what the customer said so far, up to their first `caseMessages` messages that say
 * anything, see {@link caseText}), then walks kb.json's
 * action sequence for that subflow (see `decideNextStep`): it calls each console action with the
 * slot values the customer gave, asks for missing ones with `request_user_input` the way ABCD's
 * agents ask for a name, account ID or order ID (the question's `case` argument names the case it works on so far), and finishes with a reply to the customer that names
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
  /** The last text each classifier classified, and its result: a turn's steps read the same customer words. */
  readonly #lastClassified = new Map<TextClassifier, { text: string; result: Classification | undefined }>();

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
    const offered = new Set(request.tools.map((t) => t.name));
    // The case is recognised from the conversation so far: every answer may tell more (an item, a refund, a bill).
    const reroute = this.#reroute(view);
    if (reroute !== undefined && offered.has(`handoff_to_${TRIAGE}`))
      return { type: 'tool', id, name: `handoff_to_${TRIAGE}`, args: { reason: reroute } };
    const subflow = withFlowPrior(
      this.#classify(classifier, caseText(view.customerTexts, view.slots, this.#options.caseMessages)),
      handedFlow(view.calls, agent),
      ontology,
    );
    if (subflow === undefined) return { type: 'text', text: 'Could you tell me more about the problem?' };
    const decision = decideNextStep(view, {
      agent,
      flow: ontology.flowOf(subflow) ?? '',
      subflow,
      sequence: ontology.sequences[subflow] ?? [],
      slotsOf: (action) => [...(ontology.actions.get(action)?.slots ?? []), ...(GUIDELINE_SLOTS[action] ?? [])],
    });
    switch (decision.type) {
      case 'call':
        if (!offered.has(decision.name))
          return {
            type: 'text',
            text: `I would ${decision.name.replace(/-/g, ' ')} now, but I do not have that tool.`,
          };
        return { type: 'tool', id, name: decision.name, args: decision.args };
      case 'ask':
        // The question carries the case the specialist works on so far (`case`; the tool reads only `prompt`), so a
        // conversation that ends while the specialist still asks has a case to count.
        return offered.has(REQUEST_USER_INPUT)
          ? { type: 'tool', id, name: REQUEST_USER_INPUT, args: { prompt: decision.prompt, case: subflow } }
          : { type: 'text', text: `${decision.prompt} (${caseLabel(subflow)})` };
      case 'reply':
        return { type: 'text', text: decision.text };
      case 'end':
        return offered.has(END_CONVERSATION)
          ? { type: 'tool', id, name: END_CONVERSATION, args: { reason: decision.reason } }
          : { type: 'text', text: 'Thank you for contacting AcmeCorp. Goodbye!' };
    }
  }

  #classify(classifier: TextClassifier, text: string): Classification | undefined {
    const last = this.#lastClassified.get(classifier);
    if (last?.text === text) return last.result;
    const result = classifier.classify(text);
    this.#lastClassified.set(classifier, { text, result });
    return result;
  }

  /**
   * The reason to hand the case back to triage when the customer's words say it belongs to another
   * specialist (see `anyFlow`), or `undefined`. Never when the case was handed back once already.
   */
  #reroute(view: ConversationView): string | undefined {
    const { agent, anyFlow, specialistFor } = this.#options;
    if (anyFlow === undefined || specialistFor === undefined) return undefined;
    if (view.calls.some((call) => call.name === `handoff_to_${TRIAGE}`)) return undefined;
    // Only until this specialist runs an action of a case (looking the customer up is every case's): from then on the
    // customer's words answer it.
    if (
      view.calls.some(
        (call) =>
          call.agent === agent &&
          !IDENTITY_STEPS.has(call.name) &&
          call.name !== REQUEST_USER_INPUT &&
          !call.name.startsWith('handoff_to_'),
      )
    )
      return undefined;
    const result = this.#classify(anyFlow, withoutIdentity(view.customerTexts.join('\n'), view.slots));
    if (result === undefined) return undefined;
    const bySpecialist = new Map<string, { flow: string; probability: number }>();
    for (const { label: flow, probability } of result.probabilities) {
      const specialist = specialistFor(flow) ?? '';
      const known = bySpecialist.get(specialist);
      // The specialist's likeliest flow names it; its probability is that of all its flows.
      bySpecialist.set(specialist, { flow: known?.flow ?? flow, probability: (known?.probability ?? 0) + probability });
    }
    const [specialist, best] = [...bySpecialist.entries()].reduce((a, b) =>
      b[1].probability > a[1].probability ? b : a,
    );
    if (specialist === agent || best.probability < (this.#options.rerouteConfidence ?? 0.9)) return undefined;
    return `flow ${best.flow}, confidence ${best.probability.toFixed(2)} (the customer's words are not a case of mine)`;
  }
}

/**
 * The customer's words a specialist recognises the case from: their messages less their name and ids
 * ({@link withoutIdentity}), joined by newlines, up to and including the `messages`-th message that says
 * anything (has a content word, see {@link hasContent}: "hi" or a bare name does not count).
 *
 * @param texts the customer's messages so far, in order
 * @param slots the slots they hold (their name and ids are left out)
 * @param messages how many saying messages to read (`undefined`: all)
 * @returns the text to classify (`''` for no messages)
 * @example
 * ```ts
 * caseText(['hi', 'my jeans came in the wrong color', 'Joyce Wu', 'it is silver'], { customer_name: 'Joyce Wu' }, 1);
 * // 'hi\nmy jeans came in the wrong color'
 * ```
 */
export function caseText(texts: readonly string[], slots: SlotValues, messages?: number): string {
  const words = texts.map((text) => withoutIdentity(text, slots));
  if (messages === undefined) return words.join('\n');
  let saying = 0;
  const last = words.findIndex((text) => hasContent(text) && ++saying === messages);
  return (last < 0 ? words : words.slice(0, last + 1)).join('\n');
}

/** The console actions that look the customer up, which start most cases' guidelines whatever the case. */
const IDENTITY_STEPS: ReadonlySet<string> = new Set(['pull-up-account', 'verify-identity']);

/** The flow and confidence triage named when it last handed the case to `agent` (`flow order_issue, confidence 0.71`). */
function handedFlow(calls: ConversationView['calls'], agent: string): { flow: string; confidence: number } | undefined {
  const reason = String(calls.filter((call) => call.name === `handoff_to_${agent}`).at(-1)?.args.reason ?? '');
  const match = /\bflow (\w+), confidence ([\d.]+)/.exec(reason);
  return match === null ? undefined : { flow: match[1]!, confidence: Number(match[2]) };
}

/**
 * The case, deciding between the specialist's flows with triage's word as the prior: each subflow's
 * probability is weighted by triage's confidence when it belongs to the flow triage named, and by
 * the rest of it otherwise (clamped to 0.05–0.95, so strong evidence in the customer's words still wins).
 */
function withFlowPrior(
  result: Classification | undefined,
  handed: { flow: string; confidence: number } | undefined,
  ontology: Ontology,
): string | undefined {
  if (result === undefined || handed === undefined) return result?.label;
  const prior = Math.min(0.95, Math.max(0.05, handed.confidence));
  let best: { label: string; weight: number } | undefined;
  for (const { label, probability } of result.probabilities) {
    const weight = probability * (ontology.flowOf(label) === handed.flow ? prior : 1 - prior);
    if (best === undefined || weight > best.weight) best = { label, weight };
  }
  return best?.label;
}
