// Output and resource readings. Results go to stdout as one JSON object per line (machine
// readable: `... > results.jsonl`); progress and the readable tables go to stderr.
import { readFileSync, readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

export function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

export function emit(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** A readable table on stderr. */
export function table(title: string, rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const cell = (v: string | number | undefined): string => (typeof v === 'number' ? fmtNum(v) : (v ?? ''));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string => '| ' + vals.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ') + ' |';
  log('');
  log(title);
  log(line(cols));
  log('|' + widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
  for (const r of rows) log(line(cols.map((c) => cell(r[c]))));
  log('');
}

export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export function machine(): Record<string, unknown> {
  const c = cpus();
  return { cores: c.length, cpu: c[0]?.model ?? 'unknown', mem_gb: Math.round(totalmem() / 1024 ** 3), node: process.version };
}

// ---------------------------------------------------------------------------------------------
// CPU readings, pidstat-style: client process, relay process (per thread, if --pid), whole machine.

const TICK = 100; // USER_HZ on Linux

function readProcStat(path: string): { ticks: number; comm: string } | undefined {
  try {
    const s = readFileSync(path, 'utf8');
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const f = s.slice(close + 2).split(' ');
    // fields after ")" start at field 3 (state); utime is field 14, stime field 15
    return { ticks: Number(f[11]) + Number(f[12]), comm };
  } catch {
    return undefined;
  }
}

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (first[3] ?? 0) + (first[4] ?? 0);
    const total = first.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

export function relayRssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : undefined;
  } catch {
    return undefined;
  }
}

function threadTicks(pid: number): Map<string, { ticks: number; comm: string }> {
  const out = new Map<string, { ticks: number; comm: string }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const st = readProcStat(`/proc/${pid}/task/${tid}/stat`);
      if (st) out.set(tid, st);
    }
  } catch {
    // process gone
  }
  return out;
}

export interface CpuReading {
  /** seconds the reading covers */
  cpu_window_s?: number;
  /** CPU of this benchmark client, % of one core */
  client_cpu_pct: number;
  /** CPU of the relay process (all threads), % of one core; only with --pid */
  relay_cpu_pct?: number;
  /** busiest relay threads: name:tid=% of one core */
  relay_threads?: string;
  relay_rss_mb?: number;
  /** whole machine busy, % of all cores (100 = every core busy) */
  machine_busy_pct?: number;
  /** machine CPU not used by the client or the relay, % of one core (only with --pid) */
  other_cpu_pct?: number;
}

export class CpuSampler {
  private readonly t0 = performance.now();
  private readonly c0 = process.cpuUsage();
  private readonly r0: number | undefined;
  private readonly th0: Map<string, { ticks: number; comm: string }>;
  private readonly m0 = machineTicks();

  constructor(private readonly pid: number | undefined) {
    this.r0 = pid ? readProcStat(`/proc/${pid}/stat`)?.ticks : undefined;
    this.th0 = pid ? threadTicks(pid) : new Map();
  }

  read(): CpuReading {
    const secs = (performance.now() - this.t0) / 1000;
    const c = process.cpuUsage(this.c0);
    const out: CpuReading = { cpu_window_s: Math.round(secs * 100) / 100, client_cpu_pct: Math.round(((c.user + c.system) / 1e6 / secs) * 100) };
    if (this.pid && this.r0 !== undefined) {
      const r1 = readProcStat(`/proc/${this.pid}/stat`)?.ticks;
      if (r1 !== undefined) out.relay_cpu_pct = Math.round(((r1 - this.r0) / TICK / secs) * 100);
      const th1 = threadTicks(this.pid);
      const busy: [string, number][] = [];
      for (const [tid, v] of th1) {
        const before = this.th0.get(tid)?.ticks ?? 0;
        const pct = Math.round(((v.ticks - before) / TICK / secs) * 100);
        if (pct >= 3) busy.push([tid === String(this.pid) ? `main:${tid}` : `${v.comm}:${tid}`, pct]);
      }
      busy.sort((a, b) => b[1] - a[1]);
      out.relay_threads = busy.slice(0, 6).map(([n, p]) => `${n}=${p}%`).join(' ');
      out.relay_rss_mb = relayRssMb(this.pid);
    }
    const m1 = machineTicks();
    if (this.m0 && m1 && m1.total > this.m0.total) {
      out.machine_busy_pct = Math.round(((m1.busy - this.m0.busy) / (m1.total - this.m0.total)) * 100);
      // CPU used by anything but this client and the relay (other processes, kernel work not charged
      // to either): a high figure means the machine was shared and the result is noisy
      if (out.relay_cpu_pct !== undefined) {
        out.other_cpu_pct = Math.max(0, Math.round(out.machine_busy_pct * cpus().length - out.relay_cpu_pct - out.client_cpu_pct));
        if (out.other_cpu_pct > 25) log(`  warning: other processes used ${out.other_cpu_pct}% of a core during this measurement: the machine was not quiet`);
      }
    }
    return out;
  }
}

/**
 * Waits (at most `maxSec`) until the machine has been nearly idle for two consecutive seconds, so a
 * shared machine's other work does not land inside a measurement. Returns the last busy reading.
 */
export async function waitForQuiet(maxSec: number, busyBelowPct = 15): Promise<number | undefined> {
  if (maxSec <= 0) return undefined;
  const deadline = performance.now() + maxSec * 1000;
  let prev = machineTicks();
  let quiet = 0;
  let last: number | undefined;
  let warned = false;
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const cur = machineTicks();
    if (!prev || !cur) return undefined;
    last = Math.round(((cur.busy - prev.busy) / Math.max(1, cur.total - prev.total)) * 100);
    prev = cur;
    if (last < busyBelowPct) {
      if (++quiet >= 2) return last;
    } else {
      quiet = 0;
      if (!warned) log(`  waiting for a quiet machine (now ${last}% busy, up to ${maxSec} s)`);
      warned = true;
    }
  }
  log(`  machine still ${last}% busy after ${maxSec} s: measuring anyway`);
  return last;
}
