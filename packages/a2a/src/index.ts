export { type A2AServeOptions, a2aApp, a2aRequestHandler } from './a2aApp.js';
export { A2AAuthRequiredError, type A2AAuthRequiredErrorOptions } from './a2aAuthRequiredError.js';
export { A2AExecutor, type A2AExecutorOptions, type A2AHeaders, type A2AThreadState } from './a2aExecutor.js';
export { type A2AMessageFields, agentMessage, dataOf, dataPart, textOf, textPart, userMessage } from './a2aMessages.js';
export {
  type A2AAuthenticate,
  type A2AAuthentication,
  type A2APrincipal,
  A2APrincipalUser,
  a2aAuthentication,
  principalOf,
} from './a2aPrincipal.js';
export {
  A2AThreadStore,
  type A2AThreadStoreOptions,
  type BatonTaskMetadata,
  type PendingRequestSummary,
  type TaskInput,
} from './a2aThreadStore.js';
export { type WorkflowAgentCardOptions, workflowAgentCard } from './agentCard.js';
export { approvalFromParts } from './approvalAnswer.js';
export { OwnedRequestHandler } from './ownedRequestHandler.js';
export { WorkflowA2AExecutor } from './workflowA2AExecutor.js';
