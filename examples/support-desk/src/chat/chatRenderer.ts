import type { BatonEvent } from '@baton/core';

/** Where the chat writes (the terminal, or a buffer in tests). */
export interface ChatOutput {
  /** Writes `text` as it is (no newline added). */
  write(text: string): void;
}

/**
 * Renders a session's events for a terminal chat: who is speaking (`[orders] …`, streamed as the
 * model writes), each handoff, each console action and its result, each pending request.
 *
 * @example
 * ```ts
 * const render = createChatRenderer(process.stdout);
 * for await (const event of session.send('Where is my order?')) render(event);
 * ```
 */
export function createChatRenderer(output: ChatOutput): (event: BatonEvent) => void {
  let speaking: string | undefined;
  let midLine = false;
  const line = (text: string) => {
    if (midLine) output.write('\n');
    midLine = false;
    speaking = undefined;
    output.write(`${text}\n`);
  };
  return (event) => {
    switch (event.type) {
      case 'message.delta':
        if (speaking !== event.agent) {
          if (midLine) output.write('\n');
          output.write(`[${event.agent}] `);
          speaking = event.agent;
        }
        output.write(event.delta);
        midLine = true;
        break;
      case 'handoff':
        line(`  ↪ handoff: ${event.from} → ${event.to}${event.reason ? ` (${event.reason})` : ''}`);
        break;
      case 'tool.call':
        if (event.toolCall.name.startsWith('handoff_to_') || event.toolCall.name === 'request_user_input') break;
        line(`  · ${event.agent} runs ${event.toolCall.name} ${event.toolCall.arguments}`);
        break;
      case 'tool.result':
        if (event.toolName.startsWith('handoff_to_') || event.toolName === 'request_user_input') break;
        line(`    ${event.isError ? '✗' : '✓'} ${logOf(event.content)}`);
        break;
      case 'request':
        if (event.request.type === 'user_input') line(`[${event.request.agent}] ${event.request.prompt}`);
        else if (event.request.type === 'human_step')
          line(`  ? ${event.request.agent} waits for a human operator: ${event.request.prompt}`);
        else
          line(
            `  ? ${event.request.agent} wants to run ${event.request.toolName} ${event.request.arguments}: approval needed`,
          );
        break;
      case 'error':
        line(`  ! ${event.code}: ${event.message}`);
        break;
      case 'turn.completed':
        if (midLine) output.write('\n');
        midLine = false;
        speaking = undefined;
        break;
      case 'session.closed':
        line(`(session closed: ${event.reason})`);
        break;
      default:
        break;
    }
  };
}

/** The console log line of an action's result (`{ log }`), or the result itself. */
function logOf(content: string): string {
  try {
    const value = JSON.parse(content) as { log?: unknown };
    if (typeof value.log === 'string') return value.log;
  } catch {
    // not JSON: show as is
  }
  return content;
}
