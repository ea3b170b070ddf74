// The data directory is the relay's identity: a running relay records where it listens and its
// pid in `<dataDir>/relay.json`, and removes the file when it stops cleanly. Commands given a data
// directory find the relay that owns it here (spider --once delivers to it, import refuses to write
// beside it) instead of guessing from host:port, which may be another relay's. A record whose
// process is gone (kill -9, a crash, a reboot) counts as absent.
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pidRunning } from '../lib/pid.js';

export const OWNER_FILE = 'relay.json';

export interface RelayOwner {
  pid: number;
  /** where local commands reach it: ws://127.0.0.1:<port> when it listens on every interface */
  url: string;
  httpUrl: string;
  startedAt: string;
  version: string;
  /** the script it runs, to tell it from an unrelated process that got the same pid later */
  script: string;
}

/** ws://host:port as a local client reaches a relay listening on host (a wildcard address means loopback). */
export function reachableUrl(host: string, port: number): string {
  let h = host;
  if (h === '0.0.0.0' || h === '') h = '127.0.0.1';
  if (h === '::') h = '::1';
  if (h.includes(':')) h = `[${h}]`;
  return `ws://${h}:${port}`;
}

function alive(pid: number, script: string): boolean {
  // Our own pid in the record: an earlier process with this pid left it (in a container the relay is
  // pid 1 after every restart, so a record left by `docker kill` names the new relay's pid).
  if (pid === process.pid || !pidRunning(pid)) return false;
  try {
    // Linux: a reused pid runs something else
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return !script || cmd.includes(basename(script));
  } catch {
    return true; // no /proc: trust the pid
  }
}

/** The relay that owns `dataDir` and is still running, or null. */
export function liveOwner(dataDir: string): RelayOwner | null {
  let rec: RelayOwner;
  try {
    rec = JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')) as RelayOwner;
  } catch {
    return null;
  }
  if (!Number.isInteger(rec?.pid) || rec.pid <= 0 || typeof rec.url !== 'string') return null;
  return alive(rec.pid, rec.script ?? '') ? rec : null;
}

/** Written once the relay listens (atomically: a reader never sees half a file). */
export function recordOwner(dataDir: string, owner: RelayOwner): void {
  const file = join(dataDir, OWNER_FILE);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(owner, null, 2) + '\n');
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** Removes the record if it is ours. */
export function clearOwner(dataDir: string, pid = process.pid): void {
  const file = join(dataDir, OWNER_FILE);
  try {
    if ((JSON.parse(readFileSync(file, 'utf8')) as RelayOwner).pid === pid) unlinkSync(file);
  } catch { /* already gone */ }
}

/** "the relay pid 123 (ws://127.0.0.1:7447)", for messages. */
export const describeOwner = (o: RelayOwner) => `the relay pid ${o.pid} (${o.url})`;

/**
 * Where a command that writes events (spider --once, sync) sends them: the relay given with
 * --relay, else the relay that owns the data directory; null: nobody, ingest in this process
 * (always with --local). Never whatever answers at the configured host:port.
 */
export function commandTarget(dataDir: string, relayUrl?: string, local = false): { url: string; owner: RelayOwner | null } | null {
  if (local) return null;
  if (relayUrl) return { url: relayUrl, owner: null };
  const owner = liveOwner(dataDir);
  return owner ? { url: owner.url, owner } : null;
}

/** The message when the chosen relay does not answer. */
export function notAnswering(target: { url: string; owner: RelayOwner | null }, dataDir: string, err: Error): string {
  return target.owner
    ? `${describeOwner(target.owner)} owns ${dataDir} but does not answer (${err.message}); if it is not running, delete ${join(dataDir, OWNER_FILE)}`
    : `the relay given with --relay (${target.url}) does not answer: ${err.message}`;
}
