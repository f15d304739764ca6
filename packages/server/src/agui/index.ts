/**
 * `@baton/server/ag-ui`: a handoff workflow as an AG-UI agent (the agent–user interaction protocol
 * CopilotKit and Microsoft Agent Framework speak). Needs the peer dependencies `@ag-ui/core` and
 * `@ag-ui/encoder`.
 *
 * @example
 * ```ts
 * import { aguiRoutes } from '@baton/server/ag-ui';
 * app.route('/ag-ui', aguiRoutes({ workflow: desk, authenticate }));
 * ```
 */

export { AguiEventMapper } from './aguiEventMapper.js';
export { interruptOf, matchResume, resumeAnswer } from './aguiInterrupts.js';
export { type AguiRoutesOptions, aguiRoutes } from './aguiRoutes.js';
export { type AguiState, aguiStateOf, jsonPatchOf } from './aguiState.js';
