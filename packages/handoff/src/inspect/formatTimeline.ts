import { REQUEST_USER_INPUT } from '../routing/requestUserInput.js';
import type { SessionTimeline, TimelineEntry } from './sessionTimeline.js';

/** Options of {@link formatTimeline}. */
export interface FormatTimelineOptions {
  /** Longest quoted text (user messages, replies, tool arguments and results), in characters (default 80). */
  maxText?: number;
}

/**
 * A session timeline as plain text for a terminal, one line per entry, times in UTC (`HH:MM:SS.mmm`):
 * a header (session, branch, status, counts, branches), then turns, agents, tool calls with
 * durations and errors, handoffs with reasons, requests and their answers, checkpoints with sizes.
 *
 * @param timeline what {@link sessionTimeline} returned
 * @returns the text, lines separated by `\n`
 * @example
 * ```ts
 * console.log(formatTimeline(await sessionTimeline(store, 'chat-81')));
 * // 10:02:03.120  turn 1  user: "I was charged twice"
 * // 10:02:03.121    triage
 * // 10:02:03.124      tool handoff_to_billing (1 ms) → Transferred to billing.
 * // 10:02:03.124    handoff triage → billing: double charge
 * ```
 */
export function formatTimeline(timeline: SessionTimeline, options: FormatTimelineOptions = {}): string {
  const max = options.maxText ?? 80;
  const { counts } = timeline;
  const lines = [
    `session ${timeline.sessionId}  branch ${timeline.branchId}  ${timeline.status}  created ${timeline.createdAt}`,
    [
      plural(counts.turns, 'turn'),
      plural(counts.messages, 'message'),
      `${plural(counts.toolCalls, 'tool call')} (${counts.toolErrors} failed)`,
      `${plural(counts.checkpoints, 'checkpoint')} kept`,
    ].join(' · '),
    `agents: ${timeline.agents.join(', ') || 'none'}`,
    `branches: ${timeline.branches.map((b) => (b.parent === undefined ? b.id : `${b.id} (from ${b.parent.branchId} at seq ${b.parent.atSeq})`)).join(', ')}`,
    '',
  ];
  for (const entry of timeline.entries) {
    // A request_user_input call is told by its request line (prompt and answer).
    if (entry.kind === 'tool' && entry.toolName === REQUEST_USER_INPUT && entry.result !== undefined) continue;
    lines.push(`${clock(entry.at)}  ${describe(entry, max)}`);
  }
  return lines.join('\n');
}

function describe(entry: TimelineEntry, max: number): string {
  const q = (text: string) => JSON.stringify(clip(text, max));
  // JSON (tool arguments, most results) is shown as JSON, not as a quoted string of escaped JSON.
  const json = (text: string) => (isJsonValue(text) ? clip(JSON.stringify(JSON.parse(text)), max) : q(text));
  switch (entry.kind) {
    case 'turn':
      return `turn ${entry.turn}  ${entry.autonomous ? 'autonomous' : 'user'}: ${q(entry.text)}`;
    case 'agent':
      return `  ${entry.agent}`;
    case 'reply':
      return `    reply: ${q(entry.text)}`;
    case 'tool': {
      const duration = entry.durationMs === undefined ? '' : ` (${Math.round(entry.durationMs)} ms)`;
      if (entry.result === undefined) return `    tool ${entry.toolName} ${json(entry.arguments)}  (no result)`;
      return `    tool ${entry.toolName} ${json(entry.arguments)}${duration} ${entry.isError ? 'FAILED: ' : '→ '}${json(entry.result)}`;
    }
    case 'handoff':
      return `  handoff ${entry.from} → ${entry.to}${entry.reason === undefined ? '' : `: ${q(entry.reason)}`}`;
    case 'request': {
      const { request } = entry;
      const what =
        request.type === 'tool_approval' ? `approve ${request.toolName} ${json(request.arguments)}` : q(request.prompt);
      const turn = entry.turn === undefined ? '' : `  (turn ${entry.turn})`;
      return `    request ${request.type} from ${request.agent}: ${what} → ${entry.answer === undefined ? 'pending' : q(entry.answer)}${turn}`;
    }
    case 'checkpoint':
      return `  checkpoint ${entry.id} step ${entry.step} through seq ${entry.seq} (${entry.bytes} B)`;
    case 'closed':
      return `closed: ${q(entry.reason)}`;
  }
}

/** `1 turn`, `3 turns`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Whether `text` is a JSON object or array (what tool arguments and structured results are). */
function isJsonValue(text: string): boolean {
  if (!/^\s*[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `HH:MM:SS.mmm` of an ISO timestamp (UTC), or the text itself when it is not one. */
function clock(at: string): string {
  const match = /T(\d\d:\d\d:\d\d(?:\.\d{3})?)/.exec(at);
  return (match?.[1] ?? at).padEnd(12);
}

/** `text` on one line, cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, Math.max(0, max - 1))}…`;
}
