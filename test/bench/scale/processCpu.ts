/**
 * CPU use of processes from Linux's /proc, so the scale bench can say which process used the cores
 * and whether the processes got the cores they wanted: time on a core is `utime + stime` of
 * /proc/<pid>/stat (see proc(5)); time spent runnable but waiting for a core is the second field of
 * each thread's /proc/<pid>/task/<tid>/schedstat (see the kernel's sched-stats.rst).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** What a process (with its threads, and optionally its descendants) has used so far, in seconds. */
export interface CpuSample {
  /** On a core. */
  cpu: number;
  /** Runnable, waiting for a core (a busy machine). */
  waited: number;
}

/** Whether this machine has /proc (Linux). */
export const hasProc = existsSync('/proc/self/stat');

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The fields of /proc/<pid>/stat after the command name (state is field 0), or `undefined` when the process is gone. */
function statFields(pid: number): string[] | undefined {
  const stat = read(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function waitedSeconds(pid: number): number {
  let nanoseconds = 0;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) nanoseconds += Number(read(`/proc/${pid}/task/${tid}/schedstat`)?.split(' ')[1] ?? 0);
  return nanoseconds / 1e9;
}

/**
 * What `pid` used so far: `utime + stime` and the run-queue wait of its threads; with `children`,
 * plus the `cutime + cstime` of children it has reaped and the use of its live descendants (for a
 * server that forks one process per connection, such as PostgreSQL). Zeros when it is gone.
 */
export function sampleCpu(pid: number, options: { children?: boolean } = {}): CpuSample {
  const fields = statFields(pid);
  if (fields === undefined) return { cpu: 0, waited: 0 };
  // After the command name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  let ticks = Number(fields[11]) + Number(fields[12]);
  let waited = waitedSeconds(pid);
  let childCpu = 0;
  if (options.children === true) {
    ticks += Number(fields[13]) + Number(fields[14]);
    for (const child of childPids(pid)) {
      const sample = sampleCpu(child, { children: true });
      childCpu += sample.cpu;
      waited += sample.waited;
    }
  }
  return { cpu: ticks / clockTicks() + childCpu, waited };
}

function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (/^\d+$/.test(name) && Number(statFields(Number(name))?.[1]) === parent) pids.push(Number(name));
  }
  return pids;
}
