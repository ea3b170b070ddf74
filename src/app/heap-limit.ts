// A standalone spider or worker process runs with a bounded V8 heap (spider.heapMb) and a small
// young generation (SEMI_MB).
//
// Why: with node's default limit (a quarter of RAM) V8 lets the heap of a long crawl grow to several
// times what is alive before it collects (bench/RESULTS.md "Spider at scale": 314–546 MB of
// anonymous memory against 201–260 MB with a 256 MB limit, at up to ~13% more time). The limit
// can only be set when node starts (v8.setFlagsFromString is too late: the heap is sized by then),
// so the command runs itself once more as a child with --max-old-space-size in NODE_OPTIONS and
// passes signals and the exit code through. An operator who sets the flag (node's own or
// NODE_OPTIONS) is obeyed, and spider.heapMb = 0 leaves node's default.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { getHeapStatistics } from 'node:v8';

const FLAG = '--max-old-space-size';
const SEMI_FLAG = '--max-semi-space-size';
/**
 * MB of each of the young generation's two semi-spaces in the heap-limited child (and its worker
 * threads: the flag is the process's). Node 20 lets them grow to 16 MB, which with the old space
 * V8 keeps for throughput made a crawl's heaps hold about twice what was alive. Measured on
 * bench/crawl-scale.ts (54,000 directory events, one relay; RssAnon of the spider's process tree):
 * 356 MB without the flag, 287 MB with 4, 266 MB with 1, 258 MB with 2 (and 292 MB for ten relays
 * each holding 60%, against 344 MB), the spider's CPU within a few percent (docs/spider.md,
 * bench/RESULTS.md "The spider's memory").
 */
const SEMI_MB = 2;
/** Set in the child: its parent is the process an operator started (see followParent). */
const CHILD_MARK = 'OW_HEAP_CHILD'; // not ORBWEAVER_*: those are settings, and unknown ones are refused

/** True when node was started with `flag` (on its command line or in NODE_OPTIONS): by default, an explicit old-space limit. */
export function hasHeapLimit(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '', flag = FLAG): boolean {
  const set = (a: string) => a === flag || a.startsWith(`${flag}=`);
  return execArgv.some(set) || nodeOptions.split(/\s+/).some(set);
}

/**
 * Runs this very command again in a child node process whose old space is limited to `mb` and
 * resolves with the child's exit code (128 + signal number when a signal ended it); resolves null
 * without a child when none is needed (`mb` 0, or a limit already set). The child runs in its own
 * process group, so a Ctrl-C reaches it once, through the parent; SIGINT, SIGTERM and SIGHUP sent
 * to the parent are passed on. A parent killed outright (SIGKILL) closes the IPC channel, and the
 * child stops as on SIGTERM (followParent).
 */
export function rerunWithHeapLimit(mb: number): Promise<number> | null {
  if (mb <= 0 || hasHeapLimit()) return null;
  // a semi-space size the operator set is kept (SEMI_MB above)
  const semi = hasHeapLimit(process.execArgv, process.env.NODE_OPTIONS ?? '', SEMI_FLAG) ? '' : ` ${SEMI_FLAG}=${SEMI_MB}`;
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${FLAG}=${mb}${semi}`.trim(), [CHILD_MARK]: '1' };
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env, detached: true, stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forwarders = signals.map((sig) => {
    const f = () => { child.kill(sig); };
    process.on(sig, f);
    return [sig, f] as const;
  });
  return new Promise((resolve) => {
    const done = (code: number) => {
      for (const [sig, f] of forwarders) process.off(sig, f);
      resolve(code);
    };
    child.once('error', (e) => { process.stderr.write(`orbweaver: could not start the heap-limited process: ${e.message}\n`); done(2); });
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
  });
}

/**
 * In the child of rerunWithHeapLimit: stop as on SIGTERM when the parent goes away without passing
 * a signal on (killed with SIGKILL), so no crawl is left running that nobody can stop. The channel
 * does not keep the process alive.
 */
export function followParent(): void {
  if (process.env[CHILD_MARK] !== '1' || !process.channel) return;
  delete process.env[CHILD_MARK];
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

/** The V8 heap limit of this process in MB (old space plus young generation), for start-up logs. */
export function heapLimitMb(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
}

/**
 * The old-space limit this process was started with (--max-old-space-size, the figure spider.heapMb
 * sets), MB; null with node's default. V8's whole limit (heapLimitMb) is larger by the young
 * generation: for an old space of 256 MB, 304 on Node 20 and 22, 448 on Node 24. Both go into the start-up log, so the figure an
 * operator configured is the one they read.
 */
export function oldSpaceMb(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): number | null {
  let mb: number | null = null;
  // the last one wins, and the command line comes after NODE_OPTIONS
  for (const a of [...nodeOptions.split(/\s+/), ...execArgv]) {
    const m = new RegExp(`^${FLAG}=(\\d+)$`).exec(a);
    if (m) mb = Number(m[1]);
  }
  return mb;
}
