import { ConfigurationError } from '../errors.js';
import type { ModelClient } from '../models/modelClient.js';
import { OpenAIChatModel } from './openAIChatModel.js';
import { OpenAIResponsesModel, type OpenAIResponsesModelOptions } from './openAIResponsesModel.js';

/** Options of {@link createOpenAIModel}: which API, plus that client's options. */
export type CreateOpenAIModelOptions = OpenAIResponsesModelOptions & {
  /** `'chat'` (Chat Completions, default; works with OpenAI-compatible servers) or `'responses'`. */
  api?: 'chat' | 'responses';
};

/**
 * Builds an OpenAI model client by API name, e.g. from configuration.
 *
 * @returns an {@link OpenAIChatModel} (`api: 'chat'`, default) or an {@link OpenAIResponsesModel}
 * @throws {ConfigurationError} for an unknown `api`, or when no API key is given and `OPENAI_API_KEY` is unset
 * @example
 * ```ts
 * import { createOpenAIModel } from '@baton/core/openai';
 * const model = createOpenAIModel({ api: 'responses', model: process.env.MODEL ?? 'gpt-4.1-mini' });
 * ```
 */
export function createOpenAIModel(options: CreateOpenAIModelOptions): ModelClient {
  const { api = 'chat', ...rest } = options;
  if (api === 'responses') return new OpenAIResponsesModel(rest);
  if (api !== 'chat')
    throw new ConfigurationError(`Unknown OpenAI api ${JSON.stringify(api)}: use 'chat' or 'responses'.`);
  const { store: _store, ...chat } = rest;
  return new OpenAIChatModel(chat);
}
