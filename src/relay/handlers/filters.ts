// Turns a REQ's or COUNT's filter list into checked filters, or refuses it with a CLOSED.
import { FilterError, parseFilter, type Filter } from '../../nostr/filter.js';
import { closedMessage } from '../../nostr/messages.js';
import { firstRefusal } from '../../ingest/hooks.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { filterValues } from '../policy/budgets.js';

/**
 * A REQ's or COUNT's filters after the rate limit and the filter checks; on refusal the CLOSED is
 * sent and counted here and null is returned.
 */
export function admitFilters(h: RelayContext, conn: Connection, subId: string, raw: unknown[], verb: 'REQ' | 'COUNT'): Filter[] | null {
  const limited = h.access.rateLimit(verb, conn); // counted as a refusal there
  const filters = limited ?? readFilters(h, conn, raw, verb);
  if (typeof filters !== 'string') return filters;
  refuse(h, conn, subId, verb, filters, limited !== null);
  return null;
}

/** A REQ or COUNT that finds too many queries waiting for a slot (policy/query-slots.ts). */
export const QUEUE_FULL = 'rate-limited: too many queries waiting on this connection or from your IP address; wait for their answers';

/** Sends, logs and counts a REQ's or COUNT's refusal (`logged`: the refusal log already has it, as rateLimit() logs its own). */
export function refuse(h: RelayContext, conn: Connection, subId: string, verb: 'REQ' | 'COUNT', message: string, logged = false): void {
  if (!logged) h.access.refused(verb, message, conn.ip);
  h.metrics.refusals.inc({ reason: message.slice(0, message.indexOf(':')) });
  h.access.beforeRefusal(conn, message); // auth-required: the challenge goes first (on-demand mode)
  conn.send(closedMessage(subId, message));
}

export function readFilters(h: RelayContext, conn: Connection, raw: unknown[], verb: 'REQ' | 'COUNT'): Filter[] | string {
  const { limits } = h.config;
  if (raw.length === 0) return `invalid: ${verb} needs at least one filter`;
  if (raw.length > limits.maxFilters) return `invalid: more than ${limits.maxFilters} filters`;
  const filters: Filter[] = [];
  for (const r of raw) {
    try {
      const f = parseFilter(r, { maxFilterValues: limits.maxFilterValues, maxTagFilters: 16, searchKinds: h.config.search.kinds });
      // a limit is kept as asked, never refused: a REQ's answerLimits (nostr/lookups.ts) clamps a
      // scan to limits.maxLimit and bounds a lookup by its own size; NEG-OPEN takes it as given
      filters.push(f);
    } catch (e) {
      if (e instanceof FilterError) return `invalid: ${e.message}`;
      throw e;
    }
  }
  const values = filterValues(filters);
  if (values > limits.maxValuesPerReq) return `restricted: this ${verb} has ${values} filter values, more than ${limits.maxValuesPerReq} (each filter counts one plus the values of its lists)`;
  return firstRefusal(h.policies.rejectFilter, filters, { ip: conn.ip, authed: conn.authed, verb }) ?? filters;
}
