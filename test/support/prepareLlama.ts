/**
 * `pnpm test:llm:prepare`: installs what `pnpm test:llm` needs (llama-cpp-python, built from source
 * once per machine, and the model; see llamaServer.ts) without running a test. `.ci/run` starts it
 * at low priority before the main tests, so on a fresh machine the build overlaps them instead of
 * following them; `test:llm` then finds it ready (or waits on the build's lock).
 */
import { ensureLlamaServer } from './llamaServer.js';

const { python, modelPath } = await ensureLlamaServer();
console.log(`llama-cpp-python is ready: ${python}, model ${modelPath}`);
