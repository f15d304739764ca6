import type { BatonEvent, Message } from '@baton/core';
import {
  type Attributes,
  type Context,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { formatTraceparent } from './traceparent.js';

/** What a {@link TurnTrace} needs to know about the turns it traces. */
export interface TurnTraceScope {
  tracer: Tracer;
  workflow: string;
  sessionId: string;
  branchId: string;
  captureContent: boolean;
  /** Spans of earlier turns this one continues (a paused or interrupted turn). */
  links: Link[];
  /** Told the `traceparent` of each turn span as it starts (`undefined` once it ended), so checkpoints can carry it. */
  onTurn(traceparent: string | undefined): void;
}

/** Starts a turn span `invoke_workflow <workflow>` (its attributes are set by {@link TurnTrace.start}). */
export function startTurnSpan(tracer: Tracer, workflow: string, links: Link[]): Span {
  return tracer.startSpan(
    `invoke_workflow ${workflow}`,
    links.length === 0 ? TURN_SPAN_OPTIONS : { kind: SpanKind.INTERNAL, links },
  );
}

const TURN_SPAN_OPTIONS = { kind: SpanKind.INTERNAL };

/** Span names and attributes follow the OpenTelemetry GenAI semantic conventions (agent, inference and tool spans). */
const GEN_AI = {
  operation: 'gen_ai.operation.name',
  conversation: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/**
 * Builds the span tree of one call's turns from their events: a turn span (`invoke_workflow
 * <workflow>`), under it one `invoke_agent <agent>` span per activation, under those `chat <model>`
 * spans (one per model call) and `execute_tool <tool>` spans (concurrent calls overlap). Handoffs,
 * requests, checkpoints and non-fatal errors are span events; a failure sets ERROR status and
 * records an `exception` event on every open span.
 */
export class TurnTrace {
  readonly #scope: TurnTraceScope;
  #turn: Span | undefined;
  #agent: Span | undefined;
  #model: Span | undefined;
  readonly #tools = new Map<string, Span>();
  /** The turn span has ended (`turn.completed`): an autonomous call's next `turn.started` opens another. */
  #turnEnded = false;

  constructor(scope: TurnTraceScope) {
    this.#scope = scope;
  }

  /**
   * Starts the turn span, or takes `span` (already started by {@link startTurnSpan}) as it.
   * @returns whether it records (without an SDK it does not, and nothing else need be traced)
   */
  start(span?: Span): boolean {
    const { sessionId, branchId, workflow } = this.#scope;
    this.#turn = span ?? startTurnSpan(this.#scope.tracer, workflow, this.#scope.links);
    this.#turn.setAttributes({
      [GEN_AI.operation]: 'invoke_workflow',
      [GEN_AI.conversation]: sessionId,
      'baton.workflow': workflow,
      'baton.session.id': sessionId,
      'baton.branch.id': branchId,
    });
    this.#turnEnded = false;
    const recording = this.#turn.isRecording();
    if (recording) this.#scope.onTurn(formatTraceparent(this.#turn.spanContext()));
    return recording;
  }

  /** The context the next step of the turn runs in: the innermost open span's, so model clients and tools can make child spans. */
  get activeContext(): Context {
    const span = this.#lastTool() ?? this.#model ?? this.#agent ?? this.#turn;
    return span === undefined ? context.active() : trace.setSpan(context.active(), span);
  }

  /** Updates the spans for one event of the turn. */
  observe(event: BatonEvent): void {
    switch (event.type) {
      case 'turn.started':
        if (this.#turnEnded) this.start();
        this.#turn?.setAttribute('baton.turn', event.turn);
        return;
      case 'agent.started':
        this.#endAgent();
        this.#agent = this.#child(this.#turn, `invoke_agent ${event.agent}`, {
          [GEN_AI.operation]: 'invoke_agent',
          [GEN_AI.agentName]: event.agent,
          'baton.agent': event.agent,
        });
        return;
      case 'model.started':
        this.#model?.end();
        this.#model = this.#child(
          this.#agent ?? this.#turn,
          `chat ${event.model}`,
          { [GEN_AI.operation]: 'chat', [GEN_AI.requestModel]: event.model, 'baton.agent': event.agent },
          SpanKind.CLIENT,
        );
        return;
      case 'model.completed':
        this.#model?.setAttributes({
          [GEN_AI.inputTokens]: event.usage.inputTokens,
          [GEN_AI.outputTokens]: event.usage.outputTokens,
          [GEN_AI.finishReasons]: [event.finishReason],
        });
        this.#model?.end();
        this.#model = undefined;
        return;
      case 'message':
        this.#captureMessage(event.message);
        return;
      case 'tool.call': {
        const attributes: Attributes = {
          [GEN_AI.operation]: 'execute_tool',
          [GEN_AI.toolName]: event.toolCall.name,
          [GEN_AI.toolCallId]: event.toolCall.id,
          [GEN_AI.toolType]: 'function',
          'baton.agent': event.agent,
        };
        if (this.#scope.captureContent) attributes[GEN_AI.toolArguments] = event.toolCall.arguments;
        this.#tools.get(event.toolCall.id)?.end();
        this.#tools.set(
          event.toolCall.id,
          this.#child(this.#agent ?? this.#turn, `execute_tool ${event.toolCall.name}`, attributes),
        );
        return;
      }
      case 'tool.result':
        this.#toolResult(event);
        return;
      case 'handoff': {
        const attributes: Attributes = { 'baton.handoff.source': event.from, 'baton.handoff.target': event.to };
        if (event.reason !== undefined) attributes['baton.handoff.reason'] = event.reason;
        const span = this.#agent ?? this.#turn;
        span?.addEvent('baton.handoff', attributes);
        span?.setAttribute('baton.handoff.target', event.to);
        this.#endAgent();
        return;
      }
      case 'request': {
        const { request } = event;
        const attributes: Attributes = {
          'baton.request.id': request.id,
          'baton.request.type': request.type,
          'baton.agent': request.agent,
        };
        if (request.type === 'tool_approval') attributes[GEN_AI.toolName] = request.toolName;
        const key = request.type === 'human_step' ? request.stepId : request.toolCallId;
        const tool = this.#tools.get(key);
        if (tool !== undefined) {
          // The call waits for an answer that a later turn (maybe another process) brings: its span ends here.
          tool.addEvent('baton.request', attributes);
          tool.setAttribute('baton.tool.awaiting', request.type);
          tool.end();
          this.#tools.delete(key);
        } else (this.#agent ?? this.#turn)?.addEvent('baton.request', attributes);
        this.#turn?.setAttribute('baton.turn.paused', true);
        return;
      }
      case 'checkpoint':
        this.#turn?.addEvent('baton.checkpoint', {
          'baton.checkpoint.id': event.checkpoint.id,
          'baton.checkpoint.step': event.checkpoint.step,
          'baton.checkpoint.through_seq': event.checkpoint.throughSeq,
        });
        return;
      case 'error':
        if (event.fatal) return; // the thrown error follows: see fail()
        (this.#agent ?? this.#turn)?.addEvent('baton.error', {
          'baton.error.code': event.code,
          'baton.error.message': event.message,
        });
        return;
      case 'session.closed':
        this.#turn?.addEvent('baton.session.closed', { 'baton.session.close_reason': event.reason });
        return;
      case 'turn.completed':
        this.#turn?.setAttributes({
          [GEN_AI.inputTokens]: event.usage.inputTokens,
          [GEN_AI.outputTokens]: event.usage.outputTokens,
          'baton.next_agent': event.nextAgent,
        });
        this.end();
        this.#turnEnded = true;
        return;
      default:
        return;
    }
  }

  /** Records a failure on every open span (ERROR status, an `exception` event) and ends them. */
  fail(error: unknown): void {
    const exception = error instanceof Error ? error : new Error(String(error));
    const code = (error as { code?: unknown })?.code;
    const errorType = typeof code === 'string' ? code : exception.name;
    for (const span of [...this.#tools.values(), this.#model, this.#agent, this.#turn]) {
      if (span === undefined) continue;
      span.recordException(exception);
      span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
      span.setAttribute('error.type', errorType);
    }
    this.end();
  }

  /** Ends every open span (a turn left before `turn.completed` ends here too). */
  end(): void {
    this.#endAgent();
    this.#turn?.end();
    this.#turn = undefined;
    this.#scope.onTurn(undefined);
  }

  #endAgent(): void {
    for (const tool of this.#tools.values()) tool.end();
    this.#tools.clear();
    this.#model?.end();
    this.#model = undefined;
    this.#agent?.end();
    this.#agent = undefined;
  }

  #child(parent: Span | undefined, name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span {
    const ctx = parent === undefined ? context.active() : trace.setSpan(context.active(), parent);
    return this.#scope.tracer.startSpan(name, { kind, attributes }, ctx);
  }

  #lastTool(): Span | undefined {
    let last: Span | undefined;
    for (const span of this.#tools.values()) last = span;
    return last;
  }

  #toolResult(event: Extract<BatonEvent, { type: 'tool.result' }>): void {
    let span = this.#tools.get(event.toolCallId);
    this.#tools.delete(event.toolCallId);
    if (span === undefined) {
      // A result without a call in this stream (the answer to a user_input request): a span of its recorded duration.
      const ctx = trace.setSpan(context.active(), this.#agent ?? this.#turn!);
      const attributes: Attributes = {
        [GEN_AI.operation]: 'execute_tool',
        [GEN_AI.toolName]: event.toolName,
        [GEN_AI.toolCallId]: event.toolCallId,
        [GEN_AI.toolType]: 'function',
        'baton.agent': event.agent,
      };
      span = this.#scope.tracer.startSpan(
        `execute_tool ${event.toolName}`,
        { kind: SpanKind.INTERNAL, attributes, startTime: Date.now() - event.durationMs },
        ctx,
      );
    }
    span.setAttribute('baton.tool.duration_ms', event.durationMs);
    if (this.#scope.captureContent) span.setAttribute(GEN_AI.toolResult, event.content);
    if (event.isError) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.content.slice(0, 200) });
      span.setAttribute('error.type', 'tool_error');
    }
    span.end();
  }

  #captureMessage(message: Message): void {
    if (!this.#scope.captureContent) return;
    if (message.role === 'user')
      this.#turn?.setAttribute(
        GEN_AI.inputMessages,
        JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: message.content }] }]),
      );
    else if (message.role === 'assistant' && message.content !== '') {
      this.#agent?.setAttribute(
        GEN_AI.outputMessages,
        JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: message.content }] }]),
      );
    }
  }
}
