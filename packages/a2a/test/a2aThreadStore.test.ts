import { type Task, TaskState } from '@a2a-js/sdk';
import { A2AThreadStore } from '@baton/a2a';
import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';

function task(id: string, state: TaskState, timestamp: string, fromSeq: number): Task {
  return {
    id,
    contextId: 'ctx-1',
    status: { state, message: undefined, timestamp },
    artifacts: [],
    history: [],
    metadata: { baton: { sessionId: 'desk:ctx-1', fromSeq } },
  };
}

describe('A2AThreadStore', () => {
  it('maps a context to its session and keeps only the newest finished tasks', async () => {
    const store = new InMemoryStore();
    const tasks = new A2AThreadStore({ store, agentId: 'desk', keepFinishedTasks: 2 });
    await store.createSession({ id: 'desk:ctx-1' });
    await tasks.save(task('t1', TaskState.TASK_STATE_COMPLETED, '2026-01-01T00:00:01.000Z', 1));
    await tasks.save(task('t2', TaskState.TASK_STATE_COMPLETED, '2026-01-01T00:00:02.000Z', 3));
    await tasks.save(task('t3', TaskState.TASK_STATE_INPUT_REQUIRED, '2026-01-01T00:00:03.000Z', 5));
    await tasks.save(task('t4', TaskState.TASK_STATE_COMPLETED, '2026-01-01T00:00:04.000Z', 7));

    expect(await tasks.sessionOf('ctx-1')).toBe('desk:ctx-1');
    expect(await tasks.load('t1')).toBeUndefined(); // the oldest finished task made room
    expect((await tasks.load('t3'))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED); // a waiting one stays
    expect((await tasks.tasksOf('ctx-1')).map((t) => t.id)).toEqual(['t2', 't3', 't4']);
    // The index is a Baton session of its own, so a new store object (a restart) reads the same tasks.
    const again = new A2AThreadStore({ store, agentId: 'desk' });
    expect((await again.load('t4'))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await store.getSession('a2a-threads:desk'))?.metadata).toHaveProperty('a2a');
  });
});
