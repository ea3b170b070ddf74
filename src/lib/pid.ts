// Whether a process id is in use: the check behind every record that names a process (the relay's
// owner record, the store's writer lock). Callers add their own test that it is still the same
// process (a pid is reused), which differs by what the record keeps.

/** true when a process with this pid exists, ours or another user's (EPERM). */
export function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
