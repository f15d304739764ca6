/**
 * Writes a corpus folder of today's formats (see README.md): the scenario of `corpusScenario.ts`
 * played into a FileStore and into a MongoStore on a FerretDB this script starts.
 *
 *   npx tsx --conditions=source test/corpus/writeCorpus.ts file=v2 mongo=v3
 *
 * writes `file/<name>/` (the FileStore folder) and/or `mongo/<name>/<collection>.json` (every
 * collection as Extended JSON, canonical, so ObjectIds and Dates survive); name each folder after
 * the `schemaVersion` the store writes today. It refuses to overwrite a folder that exists: a saved
 * version is never rewritten.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { BSON } from 'mongodb';
import { startMongoServer } from '../support/mongoServer.js';
import { playCorpusScenario } from './corpusScenario.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const targets = new Map(process.argv.slice(2).map((arg) => arg.split('=') as [string, string]));
if (
  targets.size === 0 ||
  [...targets].some(([kind, name]) => !['file', 'mongo'].includes(kind) || !/^v\d+$/.test(name ?? ''))
) {
  throw new Error('Usage: writeCorpus.ts file=v<n> mongo=v<n> (either or both)');
}
const fileName = targets.get('file');
const mongoName = targets.get('mongo');
for (const dir of [fileName && join(here, 'file', fileName), mongoName && join(here, 'mongo', mongoName)]) {
  if (dir && existsSync(dir)) throw new Error(`${dir} exists: a saved version is never rewritten.`);
}

if (fileName !== undefined) {
  const fileDir = join(here, 'file', fileName);
  await mkdir(fileDir, { recursive: true });
  const fileStore = new FileStore({ directory: fileDir });
  await playCorpusScenario(fileStore);
  await fileStore.close();
  await removeLocks(fileDir);
  console.log(`wrote ${fileDir}`);
}
if (mongoName !== undefined) await writeMongo(join(here, 'mongo', mongoName));

async function writeMongo(mongoDir: string): Promise<void> {
  const server = await startMongoServer();
  try {
    const store = new MongoStore({ url: server.url }, { dbName: 'corpus', collectionPrefix: 'baton_' });
    await playCorpusScenario(store);
    await mkdir(mongoDir, { recursive: true });
    for (const [name, collection] of Object.entries(store.collections)) {
      const docs = await collection.find({}).sort({ _id: 1 }).toArray();
      if (docs.length === 0) continue;
      await writeFile(
        join(mongoDir, `${name}.json`),
        `${BSON.EJSON.stringify(docs, undefined, 2, { relaxed: false })}\n`,
      );
    }
    await store.close();
  } finally {
    await server.close();
  }
  console.log(`wrote ${mongoDir}`);
}

/** Lock files are a running store's; a saved folder holds documents only. */
async function removeLocks(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && /\.lock$/.test(entry.name)) await rm(join(entry.parentPath, entry.name), { force: true });
    if (entry.isDirectory() && /\.lock$/.test(entry.name))
      await rm(join(entry.parentPath, entry.name), { recursive: true, force: true });
  }
}
