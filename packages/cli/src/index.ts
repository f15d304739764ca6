/**
 * @baton/cli: the `baton` command. `baton inspect --store file:DIR|mongodb://… --session ID` prints
 * a stored session's timeline and writes its Mermaid sequence diagram and topology graph;
 * `baton store verify|repair --store file:DIR --session ID` checks a FileStore session log record by
 * record and salvages it up to its first damaged record.
 *
 * @example
 * ```ts
 * import { inspectSession, openStore } from '@baton/cli';
 * const store = openStore('file:./data');
 * const { text } = await inspectSession({ store, sessionId: 'chat-81' });
 * ```
 */
export { type InspectOptions, type InspectResult, inspectSession } from './inspectSession.js';
export { type OpenStoreOptions, openStore } from './openStore.js';
export { createProgram, type ProgramOutput, runProgram } from './program.js';
export { checkStoreLog, type StoreLogOptions, type StoreLogResult } from './storeLog.js';
