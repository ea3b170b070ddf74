// Summarises V8 .cpuprofile files (from `node --cpu-prof`): self time by function and by file, so a
// relay's profile under a benchmark can be read without a browser.
//   node dist/bench/profile-top.js PROFILE.cpuprofile [more...] [--top 25] [--skip S]
// --skip leaves out the first S seconds of each profile (a relay's start-up work, such as the trust
// pass, before the measured load).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function shortUrl(url: string): string {
  if (!url) return '(native/vm)';
  const m = /node_modules\/(.+)$/.exec(url);
  if (m) return m[1]!;
  const d = /\/dist\/(.+)$/.exec(url);
  if (d) return d[1]!;
  return url.replace(/^file:\/\//, '').replace(/^node:/, 'node:');
}

function summarise(file: string, top: number, skipUs: number): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const self = new Map<number, number>(); // node id -> µs
  if (p.samples && p.timeDeltas) {
    let at = 0;
    for (let i = 0; i < p.samples.length; i++) {
      at += p.timeDeltas[i] ?? 0;
      if (at < skipUs) continue;
      self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
    }
  } else {
    for (const n of p.nodes) self.set(n.id, (n.hitCount ?? 0) * 1000);
  }
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const n of p.nodes) {
    const t = self.get(n.id) ?? 0;
    if (!t) continue;
    total += t;
    const fn = n.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') idle += t;
    const key = `${fn}  ${shortUrl(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + t);
    const f = fn.startsWith('(') ? fn : shortUrl(n.callFrame.url);
    byFile.set(f, (byFile.get(f) ?? 0) + t);
  }
  const busy = total - idle;
  const pct = (t: number): string => `${((t / Math.max(1, busy)) * 100).toFixed(1)}%`.padStart(6);
  console.log(`\n${basename(file)}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (${((busy / Math.max(1, total)) * 100).toFixed(0)}%); shares below are of busy time`);
  console.log('  by function (self time):');
  for (const [k, t] of [...byFn].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);
  console.log('  by file (self time):');
  for (const [k, t] of [...byFile].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, Math.min(top, 15))) console.log(`  ${pct(t)}  ${k}`);
}

const args = process.argv.slice(2);
let top = 25;
let skip = 0;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--skip') skip = Number(args[++i]);
  else files.push(args[i]!);
}
if (files.length === 0) {
  console.error('usage: node dist/bench/profile-top.js PROFILE.cpuprofile [more...] [--top N] [--skip S]');
  process.exit(2);
}
for (const f of files) summarise(f, top, skip * 1e6);
