// EVENT -> the ingest path -> OK (sent only after the store committed it).
import { noticeMessage, okMessage } from '../../nostr/messages.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';

// Not async, and no promise: the event waits for its signature check and its write as one callback
// (ingest.ts afterCheck), not as a chain of promises, and the parsed event is not held meanwhile.
export function handleEvent(h: RelayContext, conn: Connection, event: unknown): void {
  // Rate limit first; then each EVENT holds a place in flight (a signature check, a slot in the
  // write batch) until its OK, bounded per connection and per address.
  const release = h.access.rateLimit('EVENT', conn) ?? h.access.inFlight(conn, 'EVENT');
  if (typeof release === 'string') {
    const id = typeof (event as { id?: unknown })?.id === 'string' ? (event as { id: string }).id : undefined;
    h.metrics.eventsRejected.inc({ reason: 'rate-limited' });
    conn.send(id !== undefined ? okMessage(id, false, release) : noticeMessage(release));
    return;
  }
  const t0 = performance.now();
  try {
    h.ingest.direct(event, { source: 'client', ip: conn.ip, authed: conn.authed }, (err, r) => {
      release();
      try {
        if (err) throw err;
        h.metrics.writeLatency.observe((performance.now() - t0) / 1000);
        if (!r!.ok) {
          h.access.refused('EVENT', r!.message, conn.ip);
          h.access.beforeRefusal(conn, r!.message); // auth-required: the challenge goes first (on-demand mode)
        }
        conn.send(r!.id !== undefined ? okMessage(r!.id, r!.ok, r!.message) : noticeMessage(r!.message));
      } catch (e) {
        h.logger.error({ err: e, verb: 'EVENT' }, 'handler failed');
      }
    });
  } catch (e) {
    release();
    h.logger.error({ err: e, verb: 'EVENT' }, 'handler failed');
  }
}
