import { A2A_PROTOCOL_VERSION, type AgentCard, SecurityScheme } from '@a2a-js/sdk';
import type { HandoffWorkflow } from '@baton/handoff';

/** What {@link workflowAgentCard} takes. */
export interface WorkflowAgentCardOptions {
  /** Where the agent's JSON-RPC endpoint is served, e.g. `http://127.0.0.1:4000/` (absolute URL). */
  url: string;
  /** Shown to clients; default: the workflow's participants and who coordinates. */
  description?: string;
  /** The agent's version (default `'0.1.0'`). */
  version?: string;
  /** Also advertise the interface to A2A 0.3 clients (default true; `a2aApp` then accepts them too). */
  legacyCompat?: boolean;
  /**
   * How clients authenticate (A2A `securitySchemes`, by name), every one of them required by the
   * card's `securityRequirements` (default: none; `a2aApp` with `authenticate` declares HTTP bearer).
   */
  securitySchemes?: Record<string, SecurityScheme>;
}

/**
 * The A2A agent card of a workflow: named after the workflow (the A2A agent id), one skill per
 * participant (its name and `description`, the coordinator first), text in and out, streaming on,
 * a JSON-RPC interface at `url` for protocol 1.0 (and 0.3, unless `legacyCompat: false`).
 * @example
 * ```ts
 * import { workflowAgentCard } from '@baton/a2a';
 * const card = workflowAgentCard(desk, { url: 'http://127.0.0.1:4000/' });
 * card.skills.map((s) => s.id); // ['triage', 'billing']
 * ```
 */
export function workflowAgentCard(workflow: HandoffWorkflow, options: WorkflowAgentCardOptions): AgentCard {
  const { participants, coordinator } = workflow.config;
  const ordered = [...participants.values()].sort(
    (a, b) => Number(b.name === coordinator) - Number(a.name === coordinator),
  );
  const specialists = ordered
    .slice(1)
    .map((p) => p.name)
    .join(', ');
  const description =
    options.description ??
    `Baton workflow ${JSON.stringify(workflow.name)}: ${coordinator} coordinates ` +
      `${ordered.length - 1} specialist(s) (${specialists}).`;
  return {
    name: workflow.name,
    description,
    supportedInterfaces: [
      { url: options.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
      ...(options.legacyCompat === false
        ? []
        : [{ url: options.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' }]),
    ],
    provider: undefined,
    version: options.version ?? '0.1.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: Object.fromEntries(
      Object.entries(options.securitySchemes ?? {}).map(([name, scheme]) => [name, servable(scheme)]),
    ),
    securityRequirements: Object.keys(options.securitySchemes ?? {}).map((name) => ({
      schemes: { [name]: { list: [] } },
    })),
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: ordered.map((participant) => ({
      id: participant.name,
      name: participant.name,
      description: participant.description,
      tags: participant.name === coordinator ? ['coordinator'] : ['specialist'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

/**
 * A scheme as the SDK serves and reads it: the SDK's card handler sends the card as
 * `JSON.stringify` of its object (`scheme: { $case, value }`), while its client reads a card with
 * such schemes as protobuf JSON (`httpAuthSecurityScheme: {…}`); the scheme carries both.
 */
function servable(scheme: SecurityScheme): SecurityScheme {
  return { ...(SecurityScheme.toJSON(scheme) as object), ...scheme };
}
