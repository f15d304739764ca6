/**
 * The workflow entry of `@baton/temporal`, for a worker's `workflowsPath` or `bundleWorkflowCode`
 * (`createBatonWorker` passes it itself): the session workflow, `batonSession`.
 */
export { batonSession } from './sessionWorkflow.js';
