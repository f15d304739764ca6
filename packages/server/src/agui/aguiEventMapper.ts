import { type AGUIEvent, EventType, type JsonPatch, PROTOCOL_VERSION } from '@ag-ui/core';
import {
  addUsage,
  type BatonEvent,
  createId,
  emptyUsage,
  STATE_PATCHES_KEY,
  type StatePatch,
  type Usage,
} from '@baton/core';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { interruptOf } from './aguiInterrupts.js';
import { type AguiState, jsonPatchOf } from './aguiState.js';

/**
 * Maps the Baton events of one AG-UI run (a turn, or the answers to its interrupts) to AG-UI events,
 * keeping the rules AG-UI clients check (text messages and tool calls closed, steps finished, before
 * `RUN_FINISHED`):
 *
 * | Baton event | AG-UI events |
 * |---|---|
 * | (start) | `RUN_STARTED`, `STATE_SNAPSHOT` (see {@link AguiState}) |
 * | `turn.started` | `STATE_DELTA` of `/routingState` to `running` |
 * | `agent.started` | `STEP_FINISHED` (the previous agent's step), `STEP_STARTED` `{ stepName: agent }` |
 * | `message.delta` | `TEXT_MESSAGE_START` (role `assistant`, `name`: the agent; first piece), `TEXT_MESSAGE_CONTENT` |
 * | `message` (assistant) | `TEXT_MESSAGE_END`; a text that was not streamed is sent whole; its logged state changes as `STATE_DELTA` |
 * | `tool.call` | `TOOL_CALL_START`, `TOOL_CALL_ARGS` (the arguments' JSON), `TOOL_CALL_END` (once per call and run) |
 * | `tool.result` | `TOOL_CALL_RESULT` |
 * | `handoff` | `CUSTOM` `baton.handoff` `{ from, to, reason? }`, `STATE_DELTA` of `/activeAgent` |
 * | `request` | `STATE_DELTA` adding it to `/pendingRequests`; the run ends with it as an interrupt |
 * | `session.closed` | `CUSTOM` `baton.session_closed` `{ reason }` |
 * | (end) | `STATE_DELTA` to the stored state, `RUN_FINISHED` (outcome `interrupt` with the pending requests, else `success`; `usage`) |
 * | (failure) | `RUN_ERROR` `{ message, code }` |
 *
 * Every `STATE_DELTA` applies to the state the snapshot and the deltas before it make.
 */
export class AguiEventMapper {
  #state: AguiState;
  #step: string | undefined;
  #text: { id: string; agent: string } | undefined;
  /** The id of the last assistant text of the current step, parent of the tool calls that follow it. */
  #parent: string | undefined;
  readonly #announced = new Set<string>();
  #usage: Usage = emptyUsage();

  /**
   * @param threadId the AG-UI thread (the Baton session id)
   * @param runId the run's id
   * @param state the state the run starts from (sent as `STATE_SNAPSHOT`; not kept by reference)
   */
  constructor(
    readonly threadId: string,
    readonly runId: string,
    state: AguiState,
  ) {
    this.#state = jsonPatch.deepClone(state);
    // The calls this run answers were announced by the run that paused on them:
    // announcing them again would repeat their arguments.
    for (const request of state.pendingRequests)
      if (request.type !== 'human_step') this.#announced.add(request.toolCallId);
  }

  /** `RUN_STARTED` and the `STATE_SNAPSHOT`. */
  start(): AGUIEvent[] {
    return [
      { type: EventType.RUN_STARTED, threadId: this.threadId, runId: this.runId, protocolVersion: PROTOCOL_VERSION },
      { type: EventType.STATE_SNAPSHOT, snapshot: jsonPatch.deepClone(this.#state) },
    ];
  }

  /** The AG-UI events of one Baton event. */
  map(event: BatonEvent): AGUIEvent[] {
    const out: AGUIEvent[] = [];
    switch (event.type) {
      case 'turn.started':
        this.#change(out, [{ op: 'replace', path: '/routingState', value: 'running' }]);
        break;
      case 'agent.started':
        this.#endText(out);
        if (this.#step !== undefined) out.push({ type: EventType.STEP_FINISHED, stepName: this.#step });
        this.#step = event.agent;
        this.#parent = undefined;
        out.push({ type: EventType.STEP_STARTED, stepName: event.agent });
        this.#change(out, [{ op: 'replace', path: '/activeAgent', value: event.agent }]);
        break;
      case 'message.delta':
        if (event.delta === '') break;
        if (this.#text !== undefined && this.#text.agent !== event.agent) this.#endText(out);
        if (this.#text === undefined) {
          this.#text = { id: createId(), agent: event.agent };
          out.push({
            type: EventType.TEXT_MESSAGE_START,
            messageId: this.#text.id,
            role: 'assistant',
            name: event.agent,
          });
        }
        out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#text.id, delta: event.delta });
        break;
      case 'message': {
        const { message } = event;
        if (message.role === 'assistant') {
          const streamed = this.#text?.id;
          this.#endText(out);
          const id =
            streamed ??
            (message.content === '' ? undefined : this.#wholeText(out, message.agent ?? 'assistant', message.content));
          this.#parent = (message.toolCalls?.length ?? 0) > 0 ? id : undefined;
        }
        const patches = message.metadata?.[STATE_PATCHES_KEY];
        if (Array.isArray(patches) && patches.length > 0)
          this.#change(out, jsonPatchOf(patches as StatePatch[], ['branch']));
        break;
      }
      case 'tool.call': {
        if (this.#announced.has(event.toolCall.id)) break;
        this.#endText(out);
        this.#announced.add(event.toolCall.id);
        const toolCallId = event.toolCall.id;
        const parent = this.#parent === undefined ? {} : { parentMessageId: this.#parent };
        out.push({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: event.toolCall.name, ...parent });
        if (event.toolCall.arguments !== '')
          out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: event.toolCall.arguments });
        out.push({ type: EventType.TOOL_CALL_END, toolCallId });
        break;
      }
      case 'tool.result':
        this.#endText(out);
        out.push({
          type: EventType.TOOL_CALL_RESULT,
          messageId: createId(),
          toolCallId: event.toolCallId,
          content: event.content,
          role: 'tool',
        });
        break;
      case 'handoff':
        out.push({
          type: EventType.CUSTOM,
          name: 'baton.handoff',
          value: { from: event.from, to: event.to, ...(event.reason === undefined ? {} : { reason: event.reason }) },
        });
        this.#change(out, [{ op: 'replace', path: '/activeAgent', value: event.to }]);
        break;
      case 'request':
        this.#change(out, [{ op: 'add', path: '/pendingRequests/-', value: event.request }]);
        break;
      case 'turn.completed':
        this.#usage = addUsage(this.#usage, event.usage);
        this.#change(out, [{ op: 'replace', path: '/activeAgent', value: event.nextAgent }]);
        break;
      case 'session.closed':
        out.push({ type: EventType.CUSTOM, name: 'baton.session_closed', value: { reason: event.reason } });
        break;
      default:
        break;
    }
    return out;
  }

  /**
   * The events that end the run: open text and step closed, a `STATE_DELTA` from the state the
   * events told to `final` (the state as stored now; none when they agree), `RUN_FINISHED`.
   * @param final the session's state after the run ({@link aguiStateOf})
   */
  finish(final: AguiState): AGUIEvent[] {
    const out: AGUIEvent[] = [];
    this.#endText(out);
    if (this.#step !== undefined) out.push({ type: EventType.STEP_FINISHED, stepName: this.#step });
    this.#step = undefined;
    this.#change(out, jsonPatch.compare(this.#state, final));
    const interrupts = final.pendingRequests.map(interruptOf);
    const usage =
      this.#usage.requests === 0
        ? {}
        : {
            usage: [
              {
                inputTokens: this.#usage.inputTokens,
                outputTokens: this.#usage.outputTokens,
                totalTokens: this.#usage.totalTokens,
              },
            ],
          };
    out.push({
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      outcome: interrupts.length > 0 ? { type: 'interrupt', interrupts } : { type: 'success' },
      ...usage,
    });
    return out;
  }

  /** `RUN_ERROR` for a run that failed after it started (nothing may follow it). */
  fail(code: string, message: string): AGUIEvent[] {
    return [{ type: EventType.RUN_ERROR, code, message }];
  }

  /** Applies `operations` to the state the client holds and sends them, unless they change nothing. */
  #change(out: AGUIEvent[], operations: Operation[]): void {
    const next = jsonPatch.applyPatch(jsonPatch.deepClone(this.#state), operations).newDocument;
    const delta = jsonPatch.compare(this.#state, next).length === 0 ? [] : operations;
    if (delta.length === 0) return;
    this.#state = next;
    out.push({ type: EventType.STATE_DELTA, delta: delta as JsonPatch });
  }

  #wholeText(out: AGUIEvent[], agent: string, content: string): string {
    const messageId = createId();
    out.push(
      { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', name: agent },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: content },
      { type: EventType.TEXT_MESSAGE_END, messageId },
    );
    return messageId;
  }

  #endText(out: AGUIEvent[]): void {
    if (this.#text === undefined) return;
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.#text.id });
    this.#text = undefined;
  }
}
