import { clip } from './formatTimeline.js';
import { isHandoffToolName } from '../routing/handoffTools.js';
import { REQUEST_USER_INPUT } from '../routing/requestUserInput.js';
import { type HandoffGraph, handoffGraphToMermaid } from '../routing/mermaid.js';
import type { SessionTimeline } from './sessionTimeline.js';

/** Options of {@link timelineToMermaid}. */
export interface TimelineMermaidOptions {
  /** Longest message text in the diagram, in characters (default 60). */
  maxText?: number;
  /** Draw checkpoints as notes (default true). */
  checkpoints?: boolean;
}

/**
 * Draws a session timeline as a Mermaid `sequenceDiagram`: the user and each agent are participants;
 * user messages, replies, handoffs (with reasons), tool calls (self-messages with durations; a
 * failed one as a cross `-x`), requests and their answers are messages; turns and checkpoints are
 * notes. Text is cut to `maxText` and Mermaid's special characters are written as entity codes
 * (`#59;`), so any stored text yields a diagram Mermaid parses.
 *
 * @param timeline what `sessionTimeline` returned
 * @returns Mermaid source text
 * @example
 * ```ts
 * await writeFile('chat-81.mmd', timelineToMermaid(await sessionTimeline(store, 'chat-81')));
 * ```
 */
export function timelineToMermaid(timeline: SessionTimeline, options: TimelineMermaidOptions = {}): string {
  const max = options.maxText ?? 60;
  const text = (value: string) => mermaidText(clip(value, max));
  const ids = new Map(timeline.agents.map((agent, index) => [agent, `a${index}`]));
  const id = (agent: string) => {
    let found = ids.get(agent);
    if (found === undefined) {
      found = `a${ids.size}`;
      ids.set(agent, found);
    }
    return found;
  };
  const firstAgents = firstAgentOfEachTurn(timeline);
  const body: string[] = [];
  let speaking: string | undefined;
  for (const entry of timeline.entries) {
    switch (entry.kind) {
      case 'turn':
        body.push(`  Note over user: turn ${entry.turn}`);
        speaking = undefined;
        // To the agent that took the turn (the user's words reach it first).
        body.push(`  user->>${id(firstAgents[entry.turn - 1] ?? timeline.agents[0] ?? 'desk')}: ${text(entry.text)}`);
        break;
      case 'agent':
        speaking = entry.agent;
        break;
      case 'reply':
        body.push(`  ${id(entry.agent)}-->>user: ${text(entry.text)}`);
        break;
      case 'tool': {
        // Handoff and request_user_input calls are drawn as the handoff and the request they make.
        if (isHandoffToolName(entry.toolName) || entry.toolName === REQUEST_USER_INPUT) break;
        const duration = entry.durationMs === undefined ? '' : ` (${Math.round(entry.durationMs)} ms)`;
        const arrow = entry.isError ? '-x' : '->>';
        body.push(
          `  ${id(entry.agent)}${arrow}${id(entry.agent)}: ${text(`${entry.toolName}${duration}${entry.isError ? ' failed' : ''}`)}`,
        );
        break;
      }
      case 'handoff':
        body.push(
          `  ${id(entry.from)}->>${id(entry.to)}: ${text(`handoff${entry.reason === undefined ? '' : `: ${entry.reason}`}`)}`,
        );
        break;
      case 'request': {
        const { request } = entry;
        const ask = request.type === 'tool_approval' ? `approve ${request.toolName}?` : request.prompt;
        body.push(`  ${id(request.agent)}-->>user: ${text(`${request.type}: ${ask}`)}`);
        if (entry.answer !== undefined) body.push(`  user->>${id(request.agent)}: ${text(entry.answer)}`);
        break;
      }
      case 'checkpoint':
        if (options.checkpoints !== false)
          body.push(
            `  Note over ${speaking === undefined ? 'user' : id(speaking)}: ${text(`checkpoint step ${entry.step} (${entry.bytes} B)`)}`,
          );
        break;
      case 'closed':
        body.push(`  Note over user: ${text(`closed: ${entry.reason}`)}`);
        break;
    }
  }
  const lines = ['sequenceDiagram', '  actor user as user'];
  for (const [agent, agentId] of ids) lines.push(`  participant ${agentId} as ${mermaidText(agent)}`);
  return lines.concat(body).join('\n');
}

/** The agent that spoke first in each turn (index: turn − 1), `undefined` for a turn no agent answered. */
function firstAgentOfEachTurn(timeline: SessionTimeline): (string | undefined)[] {
  const first: (string | undefined)[] = [];
  for (const entry of timeline.entries) {
    if (entry.kind === 'turn') first[entry.turn - 1] = undefined;
    else if (entry.kind === 'agent' && first.length > 0 && first[first.length - 1] === undefined)
      first[first.length - 1] = entry.agent;
  }
  return first;
}

/**
 * The handoff graph a session shows: the agents that spoke and the handoffs that happened (the first
 * agent as the coordinator), drawn with `handoffGraphToMermaid`. A workflow's full topology is
 * `workflow.toMermaid()`.
 */
export function observedGraphToMermaid(timeline: SessionTimeline): string {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of timeline.handoffs) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  const participants = [...timeline.agents];
  for (const { to } of timeline.handoffs) if (!participants.includes(to)) participants.push(to);
  const graph: HandoffGraph = { participants, coordinator: participants[0] ?? 'none', edges };
  return handoffGraphToMermaid(participants.length === 0 ? { ...graph, participants: ['none'] } : graph);
}

/** Mermaid text with its statement and comment characters as entity codes, on one line. */
function mermaidText(value: string): string {
  return value.replace(/[#;%<>&"`{}\\:]/g, (c) => `#${c.charCodeAt(0)};`).replace(/\s+/g, ' ');
}
