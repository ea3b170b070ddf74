// EVENT -> the ingest path -> OK (sent only after the store committed it).
import { noticeMessage, okMessage } from '../../nostr/messages.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';

export async function handleEvent(h: RelayContext, conn: Connection, event: unknown): Promise<void> {
  const limited = h.access.rateLimit('EVENT', conn);
  if (limited) {
    const id = typeof (event as { id?: unknown })?.id === 'string' ? (event as { id: string }).id : undefined;
    h.metrics.eventsRejected.inc({ reason: 'rate-limited' });
    conn.send(id !== undefined ? okMessage(id, false, limited) : noticeMessage(limited));
    return;
  }
  const t0 = performance.now();
  const r = await h.ingest(event, { source: 'client', ip: conn.ip, authed: conn.authed });
  h.metrics.writeLatency.observe((performance.now() - t0) / 1000);
  if (!r.ok) h.access.refused('EVENT', r.message, conn.ip);
  conn.send(r.id !== undefined ? okMessage(r.id, r.ok, r.message) : noticeMessage(r.message));
}
