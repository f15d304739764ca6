export { type Agent, type AgentOptions, type AgentOutput, agent, type Instructions } from './agents/agent.js';
export { type CheckedOutput, checkStructuredOutput, outputCorrection } from './agents/structuredOutput.js';
export { NEVER_ABORTED } from './executors/abort.js';
export { AgentExecutor } from './executors/agentExecutor.js';
export {
  type ChannelReads,
  EventChannel,
  type EventSink,
  isReaderLeft,
  type ReadySignal,
} from './executors/eventChannel.js';
export {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  type CheckpointManifestEntry,
  CheckpointSchema,
  type PendingWrite,
  PendingWriteSchema,
  parseCheckpoint,
  type StatePatch,
  StatePatchSchema,
} from './conversation/checkpoint.js';
export { isoNow } from './clock.js';
export type {
  BeforeActivationArgs,
  BeforeTurnArgs,
  ContextProvider,
  ModelInputContext,
  SessionCloseArgs,
} from './conversation/contextProvider.js';
export {
  DEFAULT_PROVIDER_STATE_MAX_BYTES,
  PROVIDER_STATE_PREFIX,
  type ProviderState,
  ProviderStateTooLargeError,
  providerState,
} from './conversation/providerState.js';
export type { Embedder, EmbedOptions } from './models/embedder.js';
export { providerErrorFor } from './models/providerError.js';
export { RECALLED_CONTEXT_PREFIX, recalledContext } from './models/recalledContext.js';
export { type OpenToolCall, openCallResults } from './conversation/openCallResults.js';
export { type Episode, EpisodeSchema } from './conversation/episode.js';
export {
  AbortedError,
  AssetTooLargeError,
  AmbiguousBranchError,
  AuthenticationError,
  BadRequestError,
  BatonError,
  BatonErrorCode,
  type BatonErrorOptions,
  BranchHasChildrenError,
  CheckpointCorruptError,
  CheckpointInUseError,
  ConcurrencyError,
  ConfigurationError,
  ContextLengthExceededError,
  DocumentCorruptError,
  InvalidIdError,
  InvalidInputError,
  isBatonError,
  LogRecordCorruptError,
  MaxStepsExceededError,
  ModelBehaviorError,
  ModelProviderError,
  type ModelProviderErrorOptions,
  NestingTooDeepError,
  NotFoundError,
  OutputValidationError,
  RateLimitError,
  RemoteExecutorError,
  type RemoteExecutorErrorOptions,
  type RemoteFailure,
  SessionClosedError,
  StoreError,
  TimeoutError,
  UnsupportedSchemaVersionError,
} from './errors.js';
export type {
  AgentStartedEvent,
  BatonEvent,
  BatonEventType,
  CheckpointEvent,
  ErrorEvent,
  EventBase,
  HandoffEvent,
  MessageDeltaEvent,
  MessageEvent,
  ModelCompletedEvent,
  ModelStartedEvent,
  RequestEvent,
  SessionClosedEvent,
  ToolCallEvent,
  ToolResultEvent,
  TurnCompletedEvent,
  TurnStartedEvent,
} from './conversation/events.js';
export type {
  BranchHistory,
  Executor,
  ExecutorInput,
  ExecutorJournal,
  ExecutorOutcome,
  TurnSettings,
} from './executors/executor.js';
export { assertValidId, createId, isValidId } from './ids.js';
export { type LogFn, type Logger, silentLogger } from './logging/logger.js';
export { type LoggedStoreOptions, loggedStore } from './logging/loggedStore.js';
export {
  type Message,
  type MessageRole,
  MessageRoleSchema,
  MessageSchema,
  type ModelMessage,
  type NewMessage,
  type ToolCall,
  ToolCallSchema,
  toModelMessage,
} from './conversation/message.js';
export { assertSafeMetadata, MAX_METADATA_DEPTH, type Metadata } from './conversation/metadata.js';
export {
  addUsage,
  collectModelResponse,
  emptyUsage,
  type FinishReason,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  type ModelSettings,
  type ModelStreamEvent,
  type OutputSchema,
  type ToolDefinition,
  type Usage,
} from './models/modelClient.js';
export {
  checkToolChoiceOption,
  forcesToolCall,
  resolveToolChoice,
  type ToolChoice,
  ToolChoiceSchema,
} from './models/toolChoice.js';
export { type ApprovalGrant, type ApprovalGrantLookup, ApprovalGrantSchema } from './conversation/approvalGrant.js';
export {
  type ApprovalDecision,
  type ConversationRef,
  ConversationRefSchema,
  type HumanStepAnswer,
  type NewRequest,
  type Request,
  requestKey,
  RequestSchema,
} from './conversation/request.js';
export { type HumanExecutorOptions, HumanExecutor } from './executors/humanExecutor.js';
export { type HumanQueue, type HumanTask, InMemoryHumanQueue } from './executors/humanQueue.js';
export { withdrawRequests } from './executors/withdrawRequests.js';
export { RemoteExecutor, type RemoteExecutorOptions } from './executors/remoteExecutor.js';
export {
  REMOTE_WIRE_VERSION,
  type RemoteStepEvent,
  RemoteStepEventSchema,
  type RemoteStepRequest,
} from './executors/remoteWireFormat.js';
export {
  type Branch,
  type BranchParent,
  BranchParentSchema,
  BranchSchema,
  MAIN_BRANCH,
  type Session,
  SessionSchema,
  type State,
  StateSchema,
} from './conversation/session.js';
export {
  branchStateAt,
  STATE_PATCHES_KEY,
  type StateAccess,
  StateContainer,
  type StateScope,
} from './conversation/state.js';
export {
  ASSETS_METADATA_KEY,
  type AssetRef,
  AssetRefSchema,
  assetRefsOf,
  describeAssets,
} from './conversation/asset.js';
export { DEFAULT_MAX_ASSET_BYTES } from './store/assets/assetInput.js';
export { hasAssets, type SessionAssets, sessionAssets } from './store/assets/sessionAssets.js';
export { FileStore, type FileStoreOptions } from './store/file/fileStore.js';
export type { SessionLogRepair, SessionLogReport } from './store/file/log/logRepair.js';
export { InMemoryStore, type InMemoryStoreOptions } from './store/memory/inMemoryStore.js';
export type {
  AssetStore,
  BatchStore,
  BranchStore,
  CheckpointRetention,
  CheckpointStore,
  CreateSessionInput,
  EpisodeFilter,
  EpisodeStore,
  EraseUserInput,
  EraseUserResult,
  ErasureStore,
  MessageStore,
  PutAssetInput,
  ReadMessagesOptions,
  SessionChange,
  SessionFilter,
  SessionStore,
  Store,
  StoreBatch,
  StoreBatchResult,
  StoredAsset,
  TenantScope,
  UpdateOptions,
} from './store/store.js';
export { writeStoreBatch } from './store/writeStoreBatch.js';
export { type BranchLease, type BranchLeaseStore, isLiveLease, type LeaseAcquisition } from './store/branchLease.js';
export { type HeldLease, TurnLease, type TurnLeaseOptions } from './store/turnLease.js';
export {
  compareLogPositions,
  type EventLogBatch,
  type EventLogEntry,
  type EventLogPage,
  type EventLogPosition,
  type EventLogRetention,
  type EventLogStore,
} from './store/eventLog.js';
export {
  type AnswerOpenToolCallsOptions,
  answerOpenToolCalls,
  findOpenToolCalls,
  type OpenToolCalls,
} from './store/openToolCalls.js';
export { IsoTimestampSchema, isIsoTimestamp } from './timestamp.js';
export {
  endConversationControl,
  handoffControl,
  isToolControl,
  type JsonSchema,
  serializeToolResult,
  type Tool,
  type ToolContext,
  type ToolControl,
  type ToolOptions,
  tool,
  userInputControl,
} from './agents/tool.js';
export { parseArguments, runToolCall, type ToolCallOutcome } from './agents/toolCall.js';
