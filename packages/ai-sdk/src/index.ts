/**
 * `@baton/ai-sdk`: a Baton model client over any Vercel AI SDK `LanguageModel` (Anthropic, Gemini,
 * Bedrock, Ollama, …). `ai` (v6) is a peer dependency: install it and the provider package you use.
 *
 * @example
 * ```ts
 * import { aisdk } from '@baton/ai-sdk';
 * import { anthropic } from '@ai-sdk/anthropic';
 * const model = aisdk(anthropic('claude-sonnet-4-5'));
 * ```
 */
export { AISDKModel, type AISDKModelOptions, aisdk } from './aiSdkModel.js';
export { toAiSdkMessages } from './toAiSdkMessages.js';
export { toBatonError } from './toBatonError.js';
