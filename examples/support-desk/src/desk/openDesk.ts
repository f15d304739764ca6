import type { ModelClient, ModelRequest, ModelStreamEvent, Store } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import { loadConversations } from '@baton/support-desk-models';
import { resolveDataSource } from '../data/dataSource.js';
import { loadOntology } from '../data/ontology.js';
import { WorldDirectory } from '../tools/world.js';
import { createDeskAgents, type DeskModels } from './deskAgents.js';
import { createOfflineModels, createOpenAIModels } from './deskModels.js';
import { chooseDeskStore } from './deskStore.js';
import { buildDeskWorkflow } from './deskWorkflow.js';

/** Options of {@link openDesk}. */
export interface OpenDeskOptions {
  /** The FileStore folder; `MONGODB_URL` in the environment picks MongoDB instead. */
  storeDir: string;
  /** A MongoDB connection string that wins over `storeDir` (default `MONGODB_URL`; `''` for none). */
  mongoUrl?: string | undefined;
  /** `'offline'` (default: the desk's offline models, no key needed) or `'openai'` (needs `OPENAI_API_KEY`). */
  models?: 'offline' | 'openai';
  /** The conversations file the offline models learn from (looked up as `resolveDataSource` does when not given). */
  data?: string;
  /** Milliseconds between streamed words of the offline models, so replies visibly stream (default 0: none). */
  paceMs?: number;
}

/** A desk ready to serve: its workflow on its store, the world its tools act on, and how to close it. */
export interface OpenedDesk {
  workflow: HandoffWorkflow;
  store: Store;
  /** The customers and orders the tools read and change (the demo world for every session). */
  worlds: WorldDirectory;
  /** Where the sessions are kept (a folder, or a MongoDB database). */
  storeLocation: string;
  /** Closes the store. */
  close(): Promise<void>;
}

/**
 * Opens the support desk as every server of the example runs it (web chat, AG-UI, A2A, MCP): the
 * models, the store, the agents and the workflow with `EpisodicMemory`. Opening it again on the same
 * folder is a restart: the sessions continue from the store.
 *
 * @param options `{ storeDir, mongoUrl?, models?, data?, paceMs? }`
 * @throws {NotFoundError} when the offline models' data is missing; {@link ConfigurationError} for `openai` without a key
 * @example
 * ```ts
 * const desk = await openDesk({ storeDir: '.data/web' });
 * const session = await desk.workflow.session({ id: 'chat-1' });
 * await desk.close();
 * ```
 */
export async function openDesk(options: OpenDeskOptions): Promise<OpenedDesk> {
  const ontology = loadOntology();
  let models: DeskModels;
  if (options.models === 'openai') models = await createOpenAIModels();
  else {
    const source = await resolveDataSource({ data: options.data });
    models = pacedModels(createOfflineModels(await loadConversations(source.file), ontology), options.paceMs ?? 0);
  }
  const deskStore = chooseDeskStore({
    directory: options.storeDir,
    mongoUrl: options.mongoUrl ?? process.env.MONGODB_URL,
  });
  const store = await deskStore.open();
  const worlds = new WorldDirectory();
  const workflow = buildDeskWorkflow({
    agents: createDeskAgents(ontology, models, worlds),
    store,
    memory: new EpisodicMemory(),
  });
  return { workflow, store, worlds, storeLocation: deskStore.location, close: () => store.close() };
}

/** The models with a pause of `ms` before each streamed piece of text (the offline models answer at once). */
function pacedModels(models: DeskModels, ms: number): DeskModels {
  if (ms <= 0) return models;
  return { triage: paced(models.triage, ms), specialist: (name) => paced(models.specialist(name), ms) };
}

function paced(model: ModelClient, ms: number): ModelClient {
  return {
    model: model.model,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      for await (const event of model.stream(request)) {
        if (event.type === 'text.delta') await new Promise((resolve) => setTimeout(resolve, ms));
        yield event;
      }
    },
  };
}
