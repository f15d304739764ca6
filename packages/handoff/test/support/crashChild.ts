/**
 * Child process of handoff.crash.test.ts: starts the turn whose third tool call never finishes,
 * and waits to be killed with SIGKILL. Usage: crashChild.ts <storeDir> <logFile>
 */
import { crashDesk } from './crashDesk.js';

const [directory, logFile] = process.argv.slice(2);
if (directory === undefined || logFile === undefined) throw new Error('usage: crashChild.ts <storeDir> <logFile>');
const { workflow } = crashDesk(directory, logFile, 'child', true);
const session = await workflow.session({ id: 'crash-1' });
for await (const event of session.send('Run the three steps')) process.stdout.write(`${event.type}\n`);
