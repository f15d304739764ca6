/**
 * CPU time of processes from Linux's /proc (`utime + stime` in /proc/<pid>/stat, see proc(5)), so
 * the scale bench can say which process used the cores: each worker, FerretDB, PostgreSQL.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

/** The fields of /proc/<pid>/stat after the command name (field 3 onwards), or `undefined` when the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Whether this machine has /proc (Linux). */
export const hasProc = existsSync('/proc/self/stat');

/**
 * Seconds of CPU a process used so far: its own `utime + stime`, plus (with `children`) the
 * `cutime + cstime` of its children it has reaped and the time of its live descendants (for a
 * server that forks one process per connection, such as PostgreSQL). 0 when it is gone.
 */
export function cpuSeconds(pid: number, options: { children?: boolean } = {}): number {
  const fields = statFields(pid);
  if (fields === undefined) return 0;
  // After the command name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  let ticks = Number(fields[11]) + Number(fields[12]);
  if (options.children === true) {
    ticks += Number(fields[13]) + Number(fields[14]);
    for (const child of childPids(pid)) ticks += cpuSeconds(child, { children: true }) * clockTicks();
  }
  return ticks / clockTicks();
}

function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (Number(statFields(Number(name))?.[1]) === parent) pids.push(Number(name));
  }
  return pids;
}
