import type { SessionTimeline } from '@baton/handoff';

/**
 * The conversation so far as the chat showed it, for a resumed chat (`chat --session ID`), told from
 * the session's stored timeline (`sessionTimeline`): what the customer typed (`you> …`, messages
 * and answers to the desk's questions), what the agents said (`[agent] …`), each handoff and each
 * approval with its answer. Tool calls and checkpoints are left out (`baton inspect` shows them).
 *
 * @param timeline what `sessionTimeline(store, sessionId)` returned
 * @returns one line per thing shown, without newlines
 * @example
 * ```ts
 * for (const line of chatTranscript(await sessionTimeline(store, session.id))) console.log(line);
 * // you> I forgot my password
 * //   ↪ handoff: triage → account (flow account_access, confidence 0.93)
 * // [account] Could I have your full name?
 * ```
 */
export function chatTranscript(timeline: SessionTimeline): string[] {
  const lines: string[] = [];
  for (const entry of timeline.entries) {
    if (entry.kind === 'turn') lines.push(`you> ${entry.text}`);
    else if (entry.kind === 'reply') lines.push(`[${entry.agent}] ${entry.text}`);
    else if (entry.kind === 'handoff')
      lines.push(`  ↪ handoff: ${entry.from} → ${entry.to}${entry.reason ? ` (${entry.reason})` : ''}`);
    else if (entry.kind === 'request') {
      const { request } = entry;
      if (request.type === 'user_input') {
        lines.push(`[${request.agent}] ${request.prompt}`);
        if (entry.answer !== undefined) lines.push(`you> ${entry.answer}`);
      } else if (request.type === 'tool_approval') {
        lines.push(
          `  ? ${request.agent} wants to run ${request.toolName} ${request.arguments}: ${entry.answer ?? 'approval needed'}`,
        );
      } else
        lines.push(
          `  ? ${request.agent} waits for a human operator: ${request.prompt}${entry.answer === undefined ? '' : ` → ${entry.answer}`}`,
        );
    }
  }
  return lines;
}
