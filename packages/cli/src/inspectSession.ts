import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError, type Store } from '@baton/core';
import {
  formatTimeline,
  observedGraphToMermaid,
  type SessionTimeline,
  sessionTimeline,
  timelineToMermaid,
} from '@baton/handoff';

/** What {@link inspectSession} reads and where it writes. */
export interface InspectOptions {
  store: Store;
  sessionId: string;
  /** Default `'main'`. */
  branch?: string;
  tenantId?: string;
  /** The folder the Mermaid files are written to (created if missing); nothing is written without it. */
  outDir?: string;
  /**
   * The workflow's topology (`workflow.toMermaid()`), when the caller has the workflow; otherwise
   * the graph of the agents and handoffs the session shows is drawn.
   */
  topology?: string;
}

/** What {@link inspectSession} found and wrote. */
export interface InspectResult {
  timeline: SessionTimeline;
  /** The timeline as text (`formatTimeline`). */
  text: string;
  /** The Mermaid `sequenceDiagram` of the timeline. */
  sequence: string;
  /** The Mermaid `flowchart` of the topology. */
  topology: string;
  /** Paths written: `<session>.<branch>.sequence.mmd`, `<session>.<branch>.topology.mmd` and a Markdown page holding both. */
  files: string[];
}

/**
 * Reads a stored session's timeline, prints nothing, and writes its Mermaid sequence diagram and
 * topology graph to `outDir` (the `baton inspect` command's work).
 *
 * @throws {NotFoundError} when the session or branch does not exist (without `tenantId`, the message
 *   says a session stored under a tenant needs `--tenant`); the store's errors
 * @example
 * ```ts
 * const { text, files } = await inspectSession({ store, sessionId: 'chat-81', outDir: './inspect' });
 * ```
 */
export async function inspectSession(options: InspectOptions): Promise<InspectResult> {
  const scope = {
    ...(options.branch === undefined ? {} : { branch: options.branch }),
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
  };
  const timeline = await sessionTimeline(options.store, options.sessionId, scope).catch(async (error: unknown) => {
    // A session stored under a tenant (the web chat's are) is invisible without its tenant id.
    if (
      error instanceof NotFoundError &&
      options.tenantId === undefined &&
      (await options.store.getSession(options.sessionId)) === undefined
    ) {
      throw new NotFoundError(
        `Session ${JSON.stringify(options.sessionId)} does not exist in this store without a tenant. ` +
          'A session stored under a tenant (as the web chat stores its sessions) is found with --tenant ID.',
      );
    }
    throw error;
  });
  const sequence = timelineToMermaid(timeline);
  const topology = options.topology ?? observedGraphToMermaid(timeline);
  const files: string[] = [];
  if (options.outDir !== undefined) {
    await mkdir(options.outDir, { recursive: true });
    const base = join(options.outDir, `${safeName(timeline.sessionId)}.${safeName(timeline.branchId)}`);
    const page = [
      `# Session ${timeline.sessionId} (branch ${timeline.branchId})`,
      '',
      '```mermaid',
      sequence,
      '```',
      '',
      '## Topology',
      '',
      '```mermaid',
      topology,
      '```',
      '',
    ].join('\n');
    for (const [path, text] of [
      [`${base}.sequence.mmd`, `${sequence}\n`],
      [`${base}.topology.mmd`, `${topology}\n`],
      [`${base}.md`, page],
    ] as const) {
      await writeFile(path, text);
      files.push(path);
    }
  }
  return { timeline, text: formatTimeline(timeline), sequence, topology, files };
}

/** A session or branch id as a file name (ids may hold `:`). */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_');
}
