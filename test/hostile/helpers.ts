// Shared by the attack tests: readings of the relay process (RSS from /proc, /metrics gauges,
// /status.json figures) and fast pre-signed events (the benchmarks' native signer).
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import type { RelayProcess } from '../helpers/relay-process.js';
import { deriveKey, getSigner, type Template } from '../../bench/lib/events.js';
import type { NostrEvent } from '../../src/nostr/event.js';

/** Resident memory of a process, MB (Linux). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Anonymous resident memory of a process, MB (Linux): RSS less the store's mapped pages and other files. */
export function anonMb(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** One unlabelled value from /metrics. */
export async function metric(relay: RelayProcess, name: string): Promise<number> {
  const text = await (await fetch(relay.httpUrl + '/metrics')).text();
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

/** The access figures of /status.json (auth, rate limits, budgets, query slots). */
export async function accessFigures(relay: RelayProcess): Promise<Record<string, number>> {
  return ((await (await fetch(relay.httpUrl + '/status.json')).json()) as { access: Record<string, number> }).access;
}

/** `n` events by `authors` keys of a named set, signed natively when bcrypto is built. */
export async function signedEvents(set: string, n: number, make: (i: number) => Template, authors = 8): Promise<NostrEvent[]> {
  const signer = await getSigner();
  const keys = Array.from({ length: authors }, (_, i) => deriveKey('hostile', set, i));
  const pks = keys.map((k) => signer.pubkey(k));
  return Array.from({ length: n }, (_, i) => signer.sign(make(i), keys[i % authors], pks[i % authors]));
}

/** Opens a raw `ws` socket (no message handling), resolving once open. */
export function rawSocket(url: string, headers: Record<string, string> = {}, opts: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 << 20, headers, ...opts });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Distinct short strings: tag values an attacker fills filters with. */
export const values = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i.toString(36)}`);
