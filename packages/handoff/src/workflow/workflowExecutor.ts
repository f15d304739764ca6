import {
  addUsage,
  type BatonEvent,
  type BranchHistory,
  ConfigurationError,
  type Executor,
  type ExecutorInput,
  type ExecutorOutcome,
  emptyUsage,
  type Message,
  type Tool,
  type Usage,
} from '@baton/core';
import { createActor } from 'xstate';
import { bindHandoffTool, handoffToolTemplate } from '../routing/handoffTools.js';
import { storedControl } from '../routing/replayHistory.js';
import type { RoutingActor, RoutingConfig, RoutingMachine } from '../routing/routingMachine.js';
import type { HandoffConfig } from '../config/handoffTypes.js';

/** What `workflow.asExecutor()` takes. */
export interface WorkflowExecutorOptions {
  /** The participant's name in the outer workflow (default: the inner workflow's name). */
  name?: string;
  /** What the outer agents see when they may hand off to it (default: names the inner participants). */
  description?: string;
}

/** What {@link WorkflowExecutor} needs of a workflow (a `HandoffWorkflow`). */
export interface NestableWorkflow {
  readonly name: string;
  readonly config: HandoffConfig;
  readonly machine: RoutingMachine;
}

/** Where the inner workflow stands in the current outer turn, derived from the outer branch's messages. */
export interface InnerPosition {
  activeAgent: string;
  previousAgent: string | null;
  handoffsThisTurn: number;
}

/**
 * A whole handoff workflow as one participant of another (`workflow.asExecutor()`). The inner
 * workflow's agents run inside the outer turn, one after the other as the inner routing allows, and
 * commit through the outer journal: every inner message is stored once, in the outer session's
 * branch, under the inner agent's name. There is no inner session and no inner checkpoint: where
 * the inner conversation stands (which inner agent acts, how many inner handoffs this turn) is
 * derived from those messages on each activation ({@link innerPosition}), so the outer session's
 * recovery (a reload, a restart, a crash) recovers the inner one too. Requests an inner agent raises
 * (`user_input`, `tool_approval`) are the outer turn's requests and are answered with
 * `outerSession.respond(id, answer)`. Inner agents get the outer participant's tools too (its
 * handoffs back to the outer agents, `request_user_input`). The inner workflow's session options
 * cannot apply — its sessions never exist: the outer session's store, checkpoints, memory and
 * handoff-history mode are used — so a workflow built with `.store()`, `.checkpoints()`,
 * `.memory()`/`.contextProviders()`, `.autonomous()`, `.terminateWhen()` or `.handoffHistory()` is
 * refused here with a `ConfigurationError` naming them (set them on the outer workflow instead).
 * Inner participant names must differ from the outer ones.
 *
 * @throws {ConfigurationError} when the inner workflow was built with session options
 *
 * @example
 * ```ts
 * const billing = new HandoffBuilder({ name: 'billing' }).participants(billingTriage, refunds, invoices).coordinator(billingTriage).build();
 * const desk = new HandoffBuilder({ name: 'support-desk' }).participants(triage, billing.asExecutor()).coordinator(triage).build();
 * ```
 */
export class WorkflowExecutor implements Executor {
  readonly name: string;
  readonly description: string;
  readonly #workflow: NestableWorkflow;
  readonly #routing: RoutingConfig;
  readonly #templates: ReadonlyMap<string, Tool>;

  constructor(workflow: NestableWorkflow, options: WorkflowExecutorOptions = {}) {
    const { config } = workflow;
    if (config.sessionOptions.length > 0) {
      throw new ConfigurationError(
        `Workflow ${JSON.stringify(workflow.name)} cannot be nested with asExecutor(): it was built with ${config.sessionOptions.join(', ')}, which belong to its own sessions, and a nested workflow runs inside the outer session (the outer workflow's store, checkpoints, memory and handoff history apply). Remove them from ${JSON.stringify(workflow.name)} and set them on the outer workflow, or use asTool() to run it in sessions of its own.`,
      );
    }
    this.#workflow = workflow;
    this.name = options.name ?? workflow.name;
    this.description =
      options.description ?? `The ${workflow.name} team (${[...config.participants.keys()].join(', ')}).`;
    this.#routing = {
      coordinator: config.coordinator,
      edges: config.edges,
      maxHandoffsPerTurn: config.maxHandoffsPerTurn,
      returnPolicyOf: (agent) => config.returnOverrides.get(agent) ?? config.returnPolicy,
    };
    this.#templates = new Map([...config.participants.values()].map((p) => [p.name, handoffToolTemplate(p)]));
  }

  /** The names of the inner workflow's participants (the agents whose messages this participant commits). */
  get innerParticipants(): readonly string[] {
    return [...this.#workflow.config.participants.keys()];
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const { participants } = this.#workflow.config;
    const base = { sessionId: input.sessionId, branchId: input.branchId };
    const view: BranchHistory = input.branchHistory ?? { messages: input.history, forAgent: () => input.history };
    const actor = this.#innerActor(innerPosition(view.messages, this.name, this.#routing, participants), input.turn);
    let usage: Usage = emptyUsage();
    let approvals = input.approvals;
    try {
      for (;;) {
        const agent = actor.getSnapshot().context.activeAgent;
        yield { type: 'agent.started', ...base, agent };
        const inner: ExecutorInput = {
          ...input,
          history: view.forAgent(),
          tools: [...(input.tools ?? []), ...this.#handoffTools(agent, actor)],
        };
        if (approvals === undefined) delete inner.approvals;
        else inner.approvals = approvals;
        approvals = undefined;
        const outcome = yield* participants.get(agent)!.execute(inner);
        usage = addUsage(usage, outcome.usage);
        if (outcome.type !== 'handoff' || !participants.has(outcome.target)) return { ...outcome, usage };
        // An inner handoff (an outer target leaves this participant: the outer runtime routes it).
        if (!actor.getSnapshot().can({ type: 'HANDOFF', target: outcome.target })) {
          yield {
            type: 'error',
            ...base,
            code: 'HANDOFF_REFUSED',
            message: `${agent} may not hand off to ${outcome.target} inside ${this.name}.`,
            fatal: false,
          };
          return { ...outcome, usage };
        }
        actor.send({ type: 'HANDOFF', target: outcome.target });
        yield outcome.reason === undefined
          ? { type: 'handoff', ...base, from: agent, to: outcome.target }
          : { type: 'handoff', ...base, from: agent, to: outcome.target, reason: outcome.reason };
      }
    } finally {
      actor.stop();
    }
  }

  /** The inner routing machine, running, at `position` (built from its persisted form: nothing is stored for it). */
  #innerActor(position: InnerPosition, turn: number): RoutingActor {
    const snapshot = {
      status: 'active',
      output: undefined,
      error: undefined,
      value: 'running',
      historyValue: {},
      context: { coordinator: this.#routing.coordinator, ...position, turn },
      children: {},
    };
    return createActor(this.#workflow.machine, { snapshot: snapshot as never }).start();
  }

  /** `handoff_to_<target>` for each inner edge of `agent`, checked against the inner machine at call time. */
  #handoffTools(agent: string, actor: RoutingActor): Tool[] {
    return [...(this.#routing.edges.get(agent) ?? [])].map((target) =>
      bindHandoffTool(
        this.#templates.get(target)!,
        target,
        (to) =>
          actor.getSnapshot().can({ type: 'HANDOFF', target: to })
            ? undefined
            : `${agent} may not hand off to ${to} now (edge or handoff limit of ${this.name}).`,
        () => undefined,
      ),
    );
  }
}

/**
 * Where a nested workflow stands in the current outer turn, from the outer branch's messages alone:
 * the turn starts after the last user message; a handoff result that enters the participant
 * (`control.target === participant`) starts the inner workflow at its entry agent; an inner handoff
 * result moves control to its target; an assistant message of an inner agent makes it the active
 * one (a paused or interrupted step resumes with the agent that made it). With nothing in this turn
 * yet, the entry agent is the inner coordinator, or the last inner agent that answered the user
 * when its return policy is `'previous'`.
 *
 * @param messages the outer branch, oldest first (handoff calls and results included)
 * @param participant the nested workflow's name in the outer workflow
 * @returns the inner active agent, the previous one and the inner handoffs of this turn
 * @example
 * ```ts
 * import { innerPosition } from '@baton/handoff';
 * const { activeAgent } = innerPosition(session.messages, 'billing', routing, billingTeam.config.participants); // e.g. 'refunds'
 * ```
 */
export function innerPosition(
  messages: readonly Message[],
  participant: string,
  routing: RoutingConfig,
  inner: ReadonlyMap<string, unknown>,
): InnerPosition {
  const start = messages.findLastIndex((m) => m.role === 'user') + 1;
  let position: InnerPosition | undefined;
  for (let i = start; i < messages.length; i += 1) {
    const message = messages[i]!;
    const control = message.role === 'tool' ? storedControl(message) : undefined;
    if (control?.kind === 'handoff' && control.target === participant) position = undefined;
    else if (control?.kind === 'handoff' && control.target !== undefined && inner.has(control.target)) {
      position = {
        activeAgent: control.target,
        previousAgent: position?.activeAgent ?? null,
        handoffsThisTurn: (position?.handoffsThisTurn ?? 0) + 1,
      };
    } else if (
      message.role === 'assistant' &&
      message.agent !== undefined &&
      inner.has(message.agent) &&
      message.agent !== position?.activeAgent
    ) {
      position = {
        activeAgent: message.agent,
        previousAgent: position?.activeAgent ?? null,
        handoffsThisTurn: position?.handoffsThisTurn ?? 0,
      };
    }
  }
  if (position !== undefined) return position;
  const lastReply = messages.findLast(
    (m, i) =>
      i < start &&
      m.role === 'assistant' &&
      (m.toolCalls?.length ?? 0) === 0 &&
      m.agent !== undefined &&
      inner.has(m.agent),
  );
  const entry =
    lastReply?.agent !== undefined && routing.returnPolicyOf(lastReply.agent) === 'previous'
      ? lastReply.agent
      : routing.coordinator;
  return { activeAgent: entry, previousAgent: null, handoffsThisTurn: 0 };
}
