/**
 * Child process of handoff.historyWindow.test.ts: on a FileStore folder, runs refund turns 1 to
 * `killAt` with a windowed desk; the refund of order `killAt` never finishes, and the child waits to
 * be killed with SIGKILL. Usage: windowCrashChild.ts <storeDir> <logFile> <window> <killAt>
 */
import { FileStore } from '@baton/core';
import { refundTurn, windowDesk } from './windowDesk.js';

const [directory, log, window, killAt] = process.argv.slice(2);
if (directory === undefined || log === undefined || window === undefined || killAt === undefined)
  throw new Error('usage: windowCrashChild.ts <storeDir> <logFile> <window> <killAt>');
const { workflow } = windowDesk(new FileStore({ directory }), {
  window: Number(window),
  log,
  who: 'child',
  blockOrder: killAt,
});
for (let order = 1; order <= Number(killAt); order += 1)
  await refundTurn(() => workflow.session({ id: 'windowed' }), order);
