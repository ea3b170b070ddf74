// CLOSE ends a subscription: it leaves the live index and any running scan stops.
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { closeNegSessions } from './neg.js';

export function closeSubscription(h: RelayContext, conn: Connection, subId: string): boolean {
  const sub = conn.subs.get(subId);
  if (!sub) return false;
  sub.abort.aborted = true;
  h.live.remove(sub);
  sub.release();
  conn.subs.delete(subId);
  return true;
}

export function closeAll(h: RelayContext, conn: Connection): void {
  for (const subId of [...conn.subs.keys()]) closeSubscription(h, conn, subId);
  closeNegSessions(h, conn);
}
