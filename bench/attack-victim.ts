// Worker thread of the attack benchmark: runs the victim's closed loop (lib/sockets.ts victim) on
// its own event loop, so the attackers' loops in the main thread do not delay its readings, and
// posts back its histograms when the main thread says stop.
import { parentPort, workerData } from 'node:worker_threads';
import { victim } from './lib/sockets.js';
import type { NostrEvent } from './lib/events.js';

const d = workerData as { url: string; ids: string[]; fresh: NostrEvent[]; timeoutMs: number };
let stopped = false;
parentPort!.once('message', () => { stopped = true; });
const r = await victim(d.url, undefined, d.ids, d.fresh, () => stopped, d.timeoutMs);
const h = (x: typeof r.byId) => ({ counts: x.counts, count: x.count, sum: x.sum, max: x.max });
parentPort!.postMessage({ byId: h(r.byId), small: h(r.small), eventOk: h(r.eventOk), timeouts: r.timeouts, failures: r.failures, acked: r.acked, lost: r.lost });
