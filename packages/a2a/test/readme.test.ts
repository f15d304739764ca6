/**
 * The README's "A small example" works as written: `readmeExample.ts` is that code block, character
 * for character, and running it prints the approval the task waits for, then the refund's answer.
 */
import { readFile } from 'node:fs/promises';
import { expect, test, vi } from 'vitest';
import { codeBlockAfter } from '../../../test/support/readmeCode.js';

const exampleUrl = new URL('./readmeExample.ts', import.meta.url);

test('the README example is the file the test runs', async () => {
  const block = await codeBlockAfter(new URL('../README.md', import.meta.url), '## A small example', 'ts');
  expect(await readFile(exampleUrl, 'utf8')).toBe(block);
});

test('running the README example prints the approval request, then the refund after "yes" over A2A', async () => {
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import('./readmeExample.js');
  } finally {
    log.mockRestore();
  }
  expect(printed).toEqual([
    [expect.stringContaining('billing asks to approve refund({"amount":40}).')],
    ['Refunded 40 EUR.'],
  ]);
}, 120_000); // the example's imports are loaded (and transformed) inside the test
