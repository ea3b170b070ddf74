// Politeness per server (host and port): the crawl's workers take a server before they fetch from
// it, one fetch at a time and a pause between two, whatever the URL's path.
import type { WorkItem } from '../directory/types.js';
import { parseTarget } from '../remote/url.js';
import { sleep } from '../lib/sleep.js';

/**
 * The server a relay URL connects to: host and port. URLs that differ only in their path (one relay
 * under several spellings, or several relays behind one server) share its politeness; another port
 * is another server.
 */
export function hostOf(url: string): string {
  try { const t = parseTarget(url); return `${t.hostname}:${t.port}`; } catch { return url; }
}

/** Orders a hop's items so that relays of one host are as far apart as possible (round robin by host). */
export function spreadHosts(items: WorkItem[]): WorkItem[] {
  const byHost = new Map<string, WorkItem[]>();
  for (const it of items) {
    const h = hostOf(it.url);
    const list = byHost.get(h);
    if (list) list.push(it); else byHost.set(h, [it]);
  }
  const lists = [...byHost.values()];
  const out: WorkItem[] = [];
  for (let i = 0; out.length < items.length; i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}

/** One fetch at a time per host, and `pause` ms between two fetches from the same host. */
export class HostGate {
  private busy = new Set<string>();
  private freeAt = new Map<string, number>();
  private waiters: Array<() => void> = [];

  constructor(private readonly pause: number) {}

  async acquire(host: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const wait = (this.freeAt.get(host) ?? 0) - Date.now();
      if (!this.busy.has(host) && wait <= 0) break;
      if (!this.busy.has(host)) await sleep(wait, signal);
      else await new Promise<void>((r) => this.waiters.push(r));
    }
    this.busy.add(host);
    this.freeAt.delete(host);
  }

  release(host: string): void {
    this.busy.delete(host);
    if (this.pause > 0) this.freeAt.set(host, Date.now() + this.pause);
    for (const w of this.waiters.splice(0)) w();
  }
}
