/**
 * Run in a new process by tokenCounter.test.ts: prints which `gpt-tokenizer` BPE rank tables are loaded
 * once `@baton/memory` is imported, and after one counter of the encoding in argv[2] has counted a text.
 */
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { TokenCounter, type TokenEncoding } from '../../src/index.js';

const loaded = (): string[] =>
  Object.keys(createRequire(import.meta.url).cache)
    .filter((path) => /gpt-tokenizer[\\/]cjs[\\/]bpeRanks[\\/]/.test(path))
    .map((path) => basename(path, '.js'))
    .sort();

const atImport = loaded();
const tokens = new TokenCounter({ encoding: process.argv[2] as TokenEncoding }).countText('I was charged twice');
console.log(JSON.stringify({ atImport, afterCounter: loaded(), tokens }));
