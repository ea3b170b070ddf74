// NIP-45 COUNT: the number of stored events matching any of the filters.
import { closedMessage, countMessage } from '../../nostr/messages.js';
import { isEmptyFilter } from '../../nostr/filter.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { readFilters } from './filters.js';

export async function handleCount(h: RelayContext, conn: Connection, subId: string, raw: unknown[]): Promise<void> {
  const filters = readFilters(h, conn, raw, 'COUNT');
  if (typeof filters === 'string') {
    h.metrics.refusals.inc({ reason: filters.slice(0, filters.indexOf(':')) });
    conn.send(closedMessage(subId, filters));
    return;
  }
  const live = filters.filter((f) => !isEmptyFilter(f)).map((f) => ({ ...f, limit: undefined }));
  conn.busy++;
  try {
    const n = live.length > 0 ? await h.store.count(live, { signal: { get aborted() { return conn.closed; } } }) : 0;
    h.metrics.counts.inc();
    conn.send(countMessage(subId, n));
  } catch (e) {
    h.logger.error({ err: e, subId }, 'count failed');
    conn.send(closedMessage(subId, 'error: the count failed'));
  } finally {
    conn.busy--;
  }
}
