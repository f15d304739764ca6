/** What {@link handoffGraphToMermaid} draws: the participants, the coordinator and the handoff edges. */
export interface HandoffGraph {
  participants: readonly string[];
  coordinator: string;
  edges: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Draws the handoff graph as a Mermaid `flowchart LR`: one node per participant (the coordinator
 * as a stadium shape with class `coordinator`), one arrow per allowed handoff.
 *
 * @returns Mermaid source text, one statement per line
 * @example
 * ```ts
 * import { handoffGraphToMermaid } from '@baton/handoff';
 * handoffGraphToMermaid({ participants: ['triage', 'billing'], coordinator: 'triage', edges: new Map([['triage', new Set(['billing'])]]) });
 * // flowchart LR
 * //   n0(["triage (coordinator)"]):::coordinator
 * //   n1["billing"]
 * //   n0 --> n1
 * //   classDef coordinator stroke-width:3px
 * ```
 */
export function handoffGraphToMermaid(graph: HandoffGraph): string {
  const ids = new Map(graph.participants.map((name, index) => [name, `n${index}`]));
  const lines = ['flowchart LR'];
  for (const name of graph.participants) {
    const id = ids.get(name)!;
    lines.push(
      name === graph.coordinator
        ? `  ${id}(["${label(name)} (coordinator)"]):::coordinator`
        : `  ${id}["${label(name)}"]`,
    );
  }
  for (const name of graph.participants) {
    for (const target of graph.edges.get(name) ?? []) lines.push(`  ${ids.get(name)} --> ${ids.get(target)}`);
  }
  lines.push('  classDef coordinator stroke-width:3px');
  return lines.join('\n');
}

function label(name: string): string {
  return name.replace(/"/g, '#quot;');
}
