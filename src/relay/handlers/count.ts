// NIP-45 COUNT: the number of stored events matching any of the filters, with the HyperLogLog
// registers (`hll`) for the counts the store maintains them for (store/counters.ts: NIP-45's common
// filters, one #p/#e/#q/#E value with their kinds), so clients can merge counts across relays.
import { closedMessage, countMessage } from '../../nostr/messages.js';
import { isEmptyFilter } from '../../nostr/filter.js';
import { hllHex } from '../../nostr/nip45.js';
import type { CountResult } from '../../store/types.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { admitFilters, QUEUE_FULL, refuse } from './filters.js';

export async function handleCount(h: RelayContext, conn: Connection, subId: string, raw: unknown[]): Promise<void> {
  const filters = admitFilters(h, conn, subId, raw, 'COUNT');
  if (!filters) return;
  // the filters are held while the COUNT waits and runs: charged like a subscription's
  const held = h.access.budgets.holdFilters(conn, filters, false);
  if (typeof held === 'string') return refuse(h, conn, subId, 'COUNT', held);
  const live = filters.filter((f) => !isEmptyFilter(f)).map((f) => ({ ...f, limit: undefined }));
  const guard = h.queries.scanGuard({ get aborted() { return conn.closed; } });
  let release: (() => void) | null = null;
  conn.busy++;
  try {
    release = await h.access.querySlot(conn);
    if (!release) {
      refuse(h, conn, subId, 'COUNT', QUEUE_FULL);
      return;
    }
    // protected kinds are counted where this reader may see them (several counts combined, no HLL)
    const r: CountResult = live.length > 0 ? await h.access.dms.count(live, conn.authed, (fs) => h.queries.count(fs, { signal: guard.signal })) : { count: 0 };
    if (guard.tripped) {
      const why = guard.tripped === 'budget' ? 'the count read more index entries than this relay allows' : 'the count ran too long';
      h.access.refused('COUNT', `error: ${why}`, conn.ip);
      conn.send(closedMessage(subId, `error: ${why}; narrow the filter`));
      return;
    }
    h.metrics.counts.inc();
    conn.send(countMessage(subId, r.count, r.approximate ?? false, r.hll && hllHex(r.hll)));
  } catch (e) {
    h.logger.error({ err: e, subId }, 'count failed');
    conn.send(closedMessage(subId, 'error: the count failed'));
  } finally {
    release?.();
    held();
    conn.busy--;
  }
}
