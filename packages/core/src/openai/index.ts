/**
 * OpenAI model clients for Baton (`@baton/core/openai`): the only place that imports the `openai`
 * SDK. Wire formats: https://platform.openai.com/docs/api-reference
 *
 * @example
 * ```ts
 * import { OpenAIChatModel, OpenAIResponsesModel } from '@baton/core/openai';
 * const chat = new OpenAIChatModel({ model: 'gpt-4.1-mini' });
 * const responses = new OpenAIResponsesModel({ model: 'gpt-4.1-mini' });
 * ```
 */
export { toChatMessages, toChatTools } from './chatMessages.js';
export { createOpenAIModel, type CreateOpenAIModelOptions } from './createOpenAIModel.js';
export { OpenAIChatModel } from './openAIChatModel.js';
export { DEFAULT_EMBEDDING_MODEL, OpenAIEmbedder, type OpenAIEmbedderOptions } from './openAIEmbedder.js';
export { createOpenAIClient, type OpenAIModelOptions } from './openAIModelOptions.js';
export { OpenAIResponsesModel, type OpenAIResponsesModelOptions } from './openAIResponsesModel.js';
export { RECALLED_CONTEXT_PREFIX } from './recalledContext.js';
export { type ResponsesInput, toResponsesInput, toResponsesTools } from './responsesInput.js';
export { toBatonError } from './toBatonError.js';
