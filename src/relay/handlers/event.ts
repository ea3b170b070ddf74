// EVENT -> the ingest path -> OK (sent only after the store committed it).
import { noticeMessage, okMessage } from '../../nostr/messages.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';

export async function handleEvent(h: RelayContext, conn: Connection, event: unknown): Promise<void> {
  const t0 = performance.now();
  const r = await h.ingest(event, { source: 'client', ip: conn.ip, authed: conn.authed });
  h.metrics.writeLatency.observe((performance.now() - t0) / 1000);
  if (r.id !== undefined) conn.cork(() => conn.send(okMessage(r.id!, r.ok, r.message)));
  else conn.cork(() => conn.send(noticeMessage(r.message)));
}
