import { RemoteExecutorError, type RemoteExecutorErrorOptions } from '@baton/core';

/** Options of {@link A2AAuthRequiredError}: core's, and the remote task that waits. */
export interface A2AAuthRequiredErrorOptions extends Omit<RemoteExecutorErrorOptions, 'failure'> {
  /** The remote task in `auth-required`. */
  taskId: string;
  /** The remote A2A context the task belongs to. */
  contextId: string;
}

/**
 * A remote A2A agent put its task in `auth-required` (A2A `TaskState`): it needs credentials of the
 * client — a token in `A2AExecutor`'s `headers`, or an authorization done out of band (a sign-in the
 * remote's status message points to) — not an answer from the user, so the turn fails with this
 * instead of asking the user. `failure` is `'status'` (a `RemoteExecutorError`, code
 * `REMOTE_EXECUTOR`); `taskId` and `contextId` name the remote task, which the remote may go on with
 * once authorized (follow it with the SDK's `GetTask`). The turn stays unfinished: once authorized,
 * `session.resume()` runs the participant again, which sends the user's message as a new task.
 *
 * @example
 * ```ts
 * import { A2AAuthRequiredError } from '@baton/a2a';
 * try {
 *   for await (const _ of session.send('Refund order 1234')) {}
 * } catch (error) {
 *   if (error instanceof A2AAuthRequiredError) console.log(`authorize, then retry; remote task ${error.taskId}`);
 * }
 * ```
 */
export class A2AAuthRequiredError extends RemoteExecutorError {
  readonly taskId: string;
  readonly contextId: string;
  constructor(message: string, options: A2AAuthRequiredErrorOptions) {
    super(message, { ...options, failure: 'status' });
    this.taskId = options.taskId;
    this.contextId = options.contextId;
  }
}
