import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ABCD_SAMPLE_NAME,
  DEMO_DATA_FILE,
  displayPath,
  REPOSITORY_ROOT,
  resolveDataSource,
} from '../src/data/dataSource.js';

// A BATON_ABCD folder holding the ABCD sample (an empty file: only its name matters here).
let dir: string;
let sample: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-source-'));
  sample = join(dir, 'abcd', ABCD_SAMPLE_NAME);
  await mkdir(join(dir, 'abcd'), { recursive: true });
  await writeFile(sample, '');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('resolveDataSource', () => {
  it('runs on the demo conversations with BATON_ABCD unset, whatever sits beside the clone: it reads only what it is told', async () => {
    expect(await resolveDataSource({ env: undefined })).toEqual({
      file: DEMO_DATA_FILE,
      origin: 'demo',
      label: 'demo conversations',
    });
    expect(await resolveDataSource({ env: '' })).toMatchObject({ origin: 'demo' });
  });

  it('prefers BATON_ABCD (a file) to the demo conversations, and --data to both', async () => {
    const mine = join(dir, 'mine.jsonl');
    await writeFile(mine, '');
    expect(await resolveDataSource({ env: mine })).toEqual({ file: mine, origin: 'env', label: 'conversations' });
    const named = join(dir, 'named.jsonl');
    expect(await resolveDataSource({ data: named, env: mine })).toEqual({
      file: named,
      origin: 'option',
      label: 'conversations',
    });
  });

  it('takes abcd-dev-400.jsonl, or the only *.jsonl, from a BATON_ABCD folder', async () => {
    expect(await resolveDataSource({ env: join(dir, 'abcd') })).toEqual({
      file: sample,
      origin: 'env',
      label: 'ABCD sample',
    });
    const single = join(dir, 'single');
    await mkdir(single);
    await writeFile(join(single, 'notes.txt'), 'not data');
    await writeFile(join(single, 'abcd-test-100.jsonl'), '');
    expect(await resolveDataSource({ env: single })).toMatchObject({
      file: join(single, 'abcd-test-100.jsonl'),
      origin: 'env',
    });
    // A relative BATON_ABCD is taken from the folder the command was run in.
    expect(await resolveDataSource({ env: 'single', cwd: dir })).toMatchObject({
      file: join(single, 'abcd-test-100.jsonl'),
      origin: 'env',
    });
  });

  it('refuses a BATON_ABCD that names nothing usable, saying what it should name', async () => {
    const missing = join(dir, 'nowhere');
    await expect(resolveDataSource({ env: missing })).rejects.toThrow(NotFoundError);
    await expect(resolveDataSource({ env: missing })).rejects.toThrow(
      `BATON_ABCD=${missing} names no file or folder. Set it to a JSON Lines file`,
    );
    const empty = join(dir, 'empty');
    await mkdir(empty);
    await expect(resolveDataSource({ env: empty })).rejects.toThrow(
      `BATON_ABCD=${empty} is a folder without ${ABCD_SAMPLE_NAME} or any *.jsonl file.`,
    );
    const several = join(dir, 'several');
    await mkdir(several);
    await writeFile(join(several, 'a.jsonl'), '');
    await writeFile(join(several, 'b.jsonl'), '');
    await expect(resolveDataSource({ env: several })).rejects.toThrow('holds several *.jsonl files (a.jsonl, b.jsonl)');
  });
});

describe('displayPath', () => {
  it('shows files in the repository relative to its root, others as they are', () => {
    expect(displayPath(DEMO_DATA_FILE)).toBe('examples/support-desk/conversations/demo.jsonl');
    expect(displayPath(join(REPOSITORY_ROOT, '..', 'elsewhere.jsonl'))).toBe(
      join(REPOSITORY_ROOT, '..', 'elsewhere.jsonl'),
    );
  });
});
