/**
 * A FileStore writer applies the checkpoint line it has just appended without parsing the line back
 * (`writtenCheckpointRecord`): its record must equal the one a reader builds from the same line
 * read back from the file (`checkpointRecord` over the parsed JSON), for any document, well-formed
 * or not, so that the writer's view of a session never differs from a new process's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CheckpointRecord,
  checkpointRecord,
  recordDocument,
  writtenCheckpointRecord,
} from '../src/store/file/log/sessionImage.js';

const SESSION = 'session-1';
const BRANCH = 'main';
const ID = 'checkpoint-1';
const AT = { offset: 120, length: 300, line: 4, op: 0 };
const SAVED_AT = '2026-11-27T06:00:00.000Z';

/** A manifest field's value: mostly what a checkpoint holds, sometimes what a damaged or odd one might. */
const oddValue = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    7,
    2 ** 53 - 1,
    2 ** 53,
    -1,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    null,
    '',
    '3',
    true,
  ),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.double(),
);

/** Checkpoint-like documents: the manifest fields right, wrong or missing, and other fields beside them. */
const documentArbitrary = fc.oneof(
  fc.record(
    {
      id: fc.oneof(fc.constant(ID), fc.constant('other'), oddValue),
      parentId: fc.oneof(fc.constant(null), fc.constant('checkpoint-0'), oddValue),
      sessionId: fc.oneof(fc.constant(SESSION), fc.constant('session-2'), oddValue),
      branchId: fc.oneof(fc.constant(BRANCH), fc.constant('fork'), oddValue),
      step: fc.oneof(fc.nat(), oddValue),
      throughSeq: fc.oneof(fc.nat(), oddValue),
      createdAt: fc.oneof(fc.constant('2026-11-27T05:00:00.000Z'), oddValue),
      state: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** What a caller reads of a record: its document parsed, nothing pending. */
function settled(record: CheckpointRecord): CheckpointRecord {
  const document = recordDocument(record);
  const { documentJson: _pending, ...rest } = record;
  return { ...rest, document };
}

describe('FileStore: a checkpoint line applied as written', () => {
  it('gives the record a reader gets from the same line read back, for any document', () => {
    fc.assert(
      fc.property(documentArbitrary, (document) => {
        const opJson = JSON.stringify({ op: 'checkpoint', branchId: BRANCH, id: ID, checkpoint: document });
        const written = writtenCheckpointRecord(SESSION, BRANCH, ID, document, opJson, SAVED_AT, AT);
        const read = checkpointRecord(
          SESSION,
          BRANCH,
          ID,
          (JSON.parse(opJson) as { checkpoint?: unknown }).checkpoint,
          SAVED_AT,
          AT,
        );
        expect(settled(written)).toEqual(settled(read));
        // The manifest's numbers are JSON's (no -0), as a reader's are.
        if (written.manifest !== undefined)
          expect(Object.is(written.manifest.step, -0) || Object.is(written.manifest.throughSeq, -0)).toBe(false);
      }),
      {
        numRuns: 2000,
        // Well-formed but for one field, which random documents reach rarely.
        examples: [
          [
            {
              id: ID,
              parentId: null,
              sessionId: SESSION,
              branchId: BRANCH,
              step: -0,
              throughSeq: 3,
              createdAt: '2026-11-27T05:00:00.000Z',
            },
          ],
          [
            {
              id: ID,
              parentId: null,
              sessionId: SESSION,
              branchId: BRANCH,
              step: 1,
              throughSeq: 2 ** 53,
              createdAt: '2026-11-27T05:00:00.000Z',
            },
          ],
          [
            {
              id: ID,
              parentId: 7,
              sessionId: SESSION,
              branchId: BRANCH,
              step: 1,
              throughSeq: 2,
              createdAt: '2026-11-27T05:00:00.000Z',
            },
          ],
          [
            {
              id: ID,
              parentId: null,
              sessionId: SESSION,
              branchId: 'fork',
              step: 1,
              throughSeq: 2,
              createdAt: '2026-11-27T05:00:00.000Z',
            },
          ],
        ],
      },
    );
  });

  it('keeps the document a copy: changing the caller’s object after the write changes nothing read', () => {
    const document = {
      id: ID,
      parentId: null,
      sessionId: SESSION,
      branchId: BRANCH,
      step: 2,
      throughSeq: 5,
      createdAt: '2026-11-27T05:00:00.000Z',
      state: { tags: ['a'] },
    };
    const opJson = JSON.stringify({ op: 'checkpoint', branchId: BRANCH, id: ID, checkpoint: document });
    const written = writtenCheckpointRecord(SESSION, BRANCH, ID, document, opJson, SAVED_AT, AT);
    document.state.tags.push('changed');
    document.step = 9;
    expect(recordDocument(written)).toEqual({ ...document, step: 2, state: { tags: ['a'] } });
    expect(written.manifest?.step).toBe(2);
  });
});
