import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Core's part of the turn path (an agent's activation: model call, tool calls, their journal and the
 * store batch): no function here is over 60 lines, as in handoff's turn path (handoff's layers.test.ts).
 */
const TURN_PATH_FILES = [
  'executors/agentExecutor.ts',
  'executors/answerToolCalls.ts',
  'executors/modelHistory.ts',
  'agents/toolCall.ts',
  'store/writeStoreBatch.ts',
];
const MAX_FUNCTION_LINES = 60;
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** `file: name is N lines` for every function in `file` longer than the limit. */
function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(src, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name !== undefined ? node.name.getText(source) : '(anonymous)';
      if (last - first + 1 > MAX_FUNCTION_LINES) long.push(`${file}: ${name} is ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

describe("core's turn path", () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(TURN_PATH_FILES.flatMap(longFunctions)).toEqual([]);
  });
});
