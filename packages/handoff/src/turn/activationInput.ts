/**
 * What one activation of an agent gets: its {@link ExecutorInput} (history, tools, state, the
 * session's assets, standing approvals, the model-input shaping) and the context the session's
 * providers add to its model input (`beforeTurn` once per turn, `beforeActivation` per agent).
 */
import {
  type ExecutorInput,
  hasAssets,
  type ModelMessage,
  providerState,
  type SessionAssets,
  sessionAssets,
} from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { APPROVAL_GRANTS_KEY, grantLookup } from './approvalGrants.js';
import type { BufferedJournal } from './bufferedJournal.js';
import type { TurnCall } from './turnStart.js';
import type { TurnSink } from './turnSink.js';

/** What one activation of `agent`'s executor gets. */
export function activationInput(
  runtime: SessionRuntime,
  journal: BufferedJournal,
  call: TurnCall,
  agent: string,
  context: readonly ModelMessage[] | undefined,
  approvals: ExecutorInput['approvals'],
  humanAnswers: ExecutorInput['humanAnswers'],
  sink: TurnSink,
): ExecutorInput {
  const input: ExecutorInput = {
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    turn: runtime.snapshot.context.turn,
    history: runtime.history.forAgent(),
    tools: runtime.toolsFor(agent),
    journal,
    state: runtime.state,
    signal: call.signal,
    branchHistory: runtime.history,
    ready: sink.ready,
  };
  if (sink.within !== undefined) input.within = sink.within;
  if (call.settings !== undefined) input.turnSettings = call.settings;
  if (context !== undefined) input.context = context;
  if (approvals !== undefined) input.approvals = approvals;
  // Standing approvals ("always allow") live in session state; most sessions have none.
  if (runtime.state.session[APPROVAL_GRANTS_KEY] !== undefined) {
    input.approvalGrant = grantLookup(runtime);
  }
  if (humanAnswers !== undefined) input.humanAnswers = humanAnswers;
  const shape = runtime.core.prepareModelInput;
  // Shaped where the activation runs: each provider reaches its own slice of this branch's state.
  if (shape !== undefined) {
    const where = { sessionId: input.sessionId, branchId: input.branchId, state: input.state };
    input.prepareModelInput = (messages) => shape(messages, where);
  }
  if (hasAssets(runtime.config.store)) input.assets = assetsOf(runtime);
  return input;
}

/** Each runtime's asset handle, made once: its store, session and tenant never change. */
const runtimeAssets = new WeakMap<SessionRuntime, SessionAssets>();

function assetsOf(runtime: SessionRuntime): SessionAssets {
  let assets = runtimeAssets.get(runtime);
  if (assets === undefined) {
    assets = sessionAssets(runtime.config.store, runtime.sessionId, runtime.scope);
    runtimeAssets.set(runtime, assets);
  }
  return assets;
}

/**
 * Context from every provider's `beforeTurn`, for the turn's model inputs (never stored). `input` is
 * what the user just said; without it (a resumed turn, an approval) the last user message.
 */
export async function beforeTurn(
  runtime: SessionRuntime,
  signal: AbortSignal,
  input: string,
): Promise<readonly ModelMessage[] | undefined> {
  const providers = runtime.config.contextProviders;
  const context: ModelMessage[] = [];
  for (const provider of providers) {
    if (provider.beforeTurn === undefined) continue;
    const state = providerState(runtime.state, provider);
    const { session, branchId, config } = runtime;
    const found = await provider.beforeTurn({ session, branchId, input, store: config.store, signal, state });
    if (found !== undefined) context.push(...found);
  }
  return context.length > 0 ? context : undefined;
}

/** The turn's context followed by every provider's `beforeActivation` context for `agent` (never stored). */
export async function beforeActivation(
  runtime: SessionRuntime,
  signal: AbortSignal,
  input: string,
  agent: string,
  turnContext: readonly ModelMessage[] | undefined,
  sink: TurnSink,
): Promise<readonly ModelMessage[] | undefined> {
  const providers = runtime.config.contextProviders.filter((p) => p.beforeActivation !== undefined);
  if (providers.length === 0) return turnContext;
  await sink.ready();
  const context: ModelMessage[] = [...(turnContext ?? [])];
  for (const provider of providers) {
    const { session, branchId } = runtime;
    const found = await provider.beforeActivation!({
      session,
      branchId,
      input,
      store: runtime.config.store,
      signal,
      agent,
    });
    if (found !== undefined) context.push(...found);
  }
  return context.length > 0 ? context : undefined;
}
