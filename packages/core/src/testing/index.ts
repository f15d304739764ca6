export {
  type RecordedRequest,
  ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedResponder,
  type ScriptedResponse,
} from './scriptedModel.js';
