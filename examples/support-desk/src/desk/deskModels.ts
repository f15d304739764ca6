import type { AISDKModelOptions } from '@baton/ai-sdk';
import type { ModelClient } from '@baton/core';
import { type AbcdConversation, createOfflineModels as trainOfflineModels } from '@baton/support-desk-models';
import type { LanguageModel } from 'ai';
import type { Ontology } from '../data/ontology.js';
import type { DeskModels } from './deskAgents.js';
import { SPECIALISTS } from './specialists.js';

// The three ways to give the desk's agents a model. Each returns DeskModels: the coordinator's model and one per
// specialist. The agents, tools and workflow are the same whichever runs them.

/**
 * The offline models, learned from `training` conversations (classifiers that stand in for a language model, so that
 * the desk runs with no API key): triage's router and a policy per specialist. How they learn is in the
 * `@baton/support-desk-models` workspace (`examples/support-desk-models`); the desk only calls this.
 *
 * @param training the conversations the models learn from (never the ones they are evaluated on)
 * @param ontology from `loadOntology`
 * @throws {InvalidInputError} when the texts are too few to learn from
 * @example
 * ```ts
 * const models = createOfflineModels(await loadConversations(DEMO_DATA_FILE), loadOntology());
 * ```
 */
export function createOfflineModels(training: readonly AbcdConversation[], ontology: Ontology): DeskModels {
  return trainOfflineModels(training, ontology, SPECIALISTS);
}

/**
 * The OpenAI models (Chat Completions), loaded lazily so that offline runs never import the SDK.
 * Every agent runs on one `OpenAIChatModel`; the model name defaults to `OPENAI_MODEL`, else
 * `gpt-4.1-mini`; `apiKey` and `baseURL` default (in the SDK) to `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
 *
 * @param options `{ model?, apiKey?, baseURL? }`
 * @throws {ConfigurationError} from the client when no API key is given and `OPENAI_API_KEY` is unset
 * @example
 * ```ts
 * const models = await createOpenAIModels({ model: 'gpt-4.1-mini' });
 * ```
 */
export async function createOpenAIModels(
  options: { model?: string; apiKey?: string; baseURL?: string } = {},
): Promise<DeskModels> {
  const { OpenAIChatModel } = await import('@baton/core/openai');
  const client: ModelClient = new OpenAIChatModel({
    ...options,
    model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  });
  return { triage: client, specialist: () => client };
}

/**
 * The desk on any Vercel AI SDK language model (Anthropic, Gemini, Bedrock, Ollama, …) through
 * `@baton/ai-sdk`, loaded lazily like the OpenAI models. Every agent runs on the one model.
 *
 * @param languageModel e.g. `anthropic('claude-sonnet-4-5')` from `@ai-sdk/anthropic`
 * @param options the adapter's options (`maxRetries`, `temperature`, …)
 * @example
 * ```ts
 * import { anthropic } from '@ai-sdk/anthropic';
 * const models = await createAISDKModels(anthropic('claude-sonnet-4-5'));
 * ```
 */
export async function createAISDKModels(
  languageModel: LanguageModel,
  options: AISDKModelOptions = {},
): Promise<DeskModels> {
  const { aisdk } = await import('@baton/ai-sdk');
  const client: ModelClient = aisdk(languageModel, options);
  return { triage: client, specialist: () => client };
}

/**
 * Wraps every model of a {@link DeskModels} (e.g. with a timer).
 *
 * @param models the models to wrap
 * @param wrap called once for the triage model and once per specialist name, on first use
 * @returns the wrapped models
 * @example
 * ```ts
 * const timed = mapDeskModels(models, (model) => new TimedModel(model, clock));
 * ```
 */
export function mapDeskModels(models: DeskModels, wrap: (model: ModelClient) => ModelClient): DeskModels {
  const triage = wrap(models.triage);
  const cache = new Map<string, ModelClient>();
  return {
    triage,
    specialist: (name) => {
      const known = cache.get(name);
      if (known !== undefined) return known;
      const model = wrap(models.specialist(name));
      cache.set(name, model);
      return model;
    },
  };
}
