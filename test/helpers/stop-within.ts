// A child process asked to stop gets a bounded time to do so. A process that does not stop is a
// defect to be reported, not a test file that hangs until the runner's ten-minute timeout: it is
// killed, and the caller gets an error carrying the process's last output.
import type { ChildProcess } from 'node:child_process';

export const STOP_GRACE_MS = 60_000;

/**
 * Sends `signal` and waits for `exited`. If the process is still running after `graceMs`, it is
 * killed with SIGKILL and this rejects with an error naming the process and its last output lines.
 */
export async function stopWithin<T>(proc: ChildProcess, exited: Promise<T>, signal: NodeJS.Signals, name: string, output: () => string, graceMs = STOP_GRACE_MS): Promise<T> {
  proc.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), graceMs); });
  const first = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (first !== 'late') return first as T;
  proc.kill('SIGKILL');
  await exited;
  const tail = output().split('\n').slice(-40).join('\n');
  throw new Error(`${name} (pid ${proc.pid}) did not stop within ${graceMs} ms of ${signal}; killed. Its last output:\n${tail}`);
}
