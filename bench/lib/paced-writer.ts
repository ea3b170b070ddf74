// A steady write load beside a read benchmark (issue 74, "reads while writing"): EVENTs taken in
// order from a JSON-lines file (events the relay does not hold: netgen's replacements and
// re-published follow lists, or another seed's set), sent on connections of their own at a fixed
// rate, whatever the relay answers, so that two relays measured in turn get the same absolute rate.
// Each writer takes the next part of the file: relays measured one after the other never get the
// same event twice (a duplicate would cost them less than a write).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { connectMany, closeAll, sendBatch, type WebSocket } from './client.js';

/** Events of a file, read once and handed out in order, part by part. */
export class EventSource {
  private lines: string[] = [];
  private next = 0;

  static async open(file: string, max = 5_000_000): Promise<EventSource> {
    const s = new EventSource();
    const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const line of rl) {
      if (line.length === 0) continue;
      s.lines.push(line.startsWith('[') ? line : `["EVENT",${line}]`);
      if (s.lines.length >= max) break;
    }
    return s;
  }

  get left(): number {
    return this.lines.length - this.next;
  }

  /** The next `n` EVENT frames (fewer when the file runs out). */
  take(n: number): string[] {
    const out = this.lines.slice(this.next, this.next + n);
    this.next += out.length;
    return out;
  }
}

export interface WriteLoad {
  /** events sent, OKs true, OKs false, events not answered when it stopped */
  sent: number;
  ok: number;
  refused: number;
  /** stops sending; resolves once the connections are closed */
  stop(): Promise<WriteLoad>;
}

const TICK_MS = 10;

/**
 * Starts writing `rate` events a second to `url` from `source` on `connections` connections, in
 * ticks of 10 ms. Events the source has not got when it runs out are simply not sent (the figures
 * say how many were).
 */
export async function startWriteLoad(url: string, source: EventSource, rate: number, connections = 4): Promise<WriteLoad> {
  const conns: WebSocket[] = await connectMany(url, connections);
  const load: WriteLoad = { sent: 0, ok: 0, refused: 0, stop: async () => load };
  for (const ws of conns) {
    ws.on('message', (data: Buffer) => {
      if (data.length < 8 || data[2] !== 0x4f || data[3] !== 0x4b) return; // ["OK",...
      if (data.includes(',true,')) load.ok++;
      else load.refused++;
    });
  }
  const started = performance.now();
  let c = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate) - load.sent;
    if (due <= 0) return;
    const frames = source.take(due);
    if (frames.length === 0) return;
    sendBatch(conns[c++ % conns.length]!, frames);
    load.sent += frames.length;
  }, TICK_MS);
  load.stop = async () => {
    clearInterval(timer);
    await new Promise((r) => setTimeout(r, 200)); // the last OKs
    closeAll(conns);
    return load;
  };
  return load;
}
