/**
 * Child process of workflowExecutor.crash.test.ts: starts the nested turn whose `issue_refund`
 * never finishes, and waits to be killed with SIGKILL. Usage: nestedCrashChild.ts <storeDir> <logFile>
 */
import { nestedCrashDesk } from './nestedCrashDesk.js';

const [directory, logFile] = process.argv.slice(2);
if (directory === undefined || logFile === undefined)
  throw new Error('usage: nestedCrashChild.ts <storeDir> <logFile>');
const { workflow } = nestedCrashDesk(directory, logFile, 'child', true);
const session = await workflow.session({ id: 'nested-crash' });
for await (const event of session.send('I was charged twice')) process.stdout.write(`${event.type}\n`);
