import { appendFileSync } from 'node:fs';
import { agent, FileStore, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { z } from 'zod';
import { HandoffBuilder } from '../../src/index.js';

/** The three tools of the crash scenario: each logs `<tool>:<who>` to `logFile` when it finishes. */
function crashTools(logFile: string, who: string, blockThird: boolean) {
  const make = (name: string, delayMs: number, block: boolean) =>
    tool({
      name,
      description: `Step ${name}.`,
      parameters: z.object({}),
      execute: async () => {
        if (block) await new Promise((resolve) => setTimeout(resolve, 600_000));
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        appendFileSync(logFile, `${name}:${who}\n`);
        return `${name} finished`;
      },
    });
  return [make('step_a', 0, false), make('step_b', 20, false), make('step_c', 0, blockThird)];
}

/**
 * The crash scenario's workflow over a FileStore folder: one agent `ops` whose first answer is
 * three parallel tool calls (ids `a`, `b`, `c`) and whose next answer is text.
 */
export function crashDesk(directory: string, logFile: string, who: string, blockThird: boolean) {
  const model = new ScriptedModel((request) =>
    request.messages.at(-1)?.role === 'user' && request.messages.filter((m) => m.role === 'user').length === 1
      ? { toolCalls: ['a', 'b', 'c'].map((id) => ({ id, name: `step_${id}`, arguments: {} })) }
      : { text: request.messages.at(-1)?.role === 'user' ? 'You are welcome.' : 'All three steps are done.' },
  );
  const ops = agent({
    name: 'ops',
    description: 'Runs operations.',
    instructions: 'Run all three steps at once.',
    model,
    tools: crashTools(logFile, who, blockThird),
  });
  const store = new FileStore({ directory });
  const workflow = new HandoffBuilder({ name: 'crash' }).participants(ops).store(store).build();
  return { workflow, store, model };
}
