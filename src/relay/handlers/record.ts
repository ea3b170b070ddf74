// ORBWEAVER-RECORD: a record write sent by a command beside the relay that owns the data directory
// (`orbweaver spider --once`), applied here so the store keeps one writing process
// (src/app/record-ops.ts applies it). Only a connection authenticated (NIP-42) with the data
// directory's local key may send one: holding that key means reading the data directory, which
// already gives the store. A request id answered before is answered again with the same result
// instead of being applied twice (a command that lost its connection sends it again): here while
// it is in flight or recent, and by the service from what it stored (app/record-ops.ts), also
// after the relay restarted.
import { recordMessage } from '../../nostr/messages.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';

export interface RecordService {
  /** the pubkey a connection must have authenticated as: the data directory's local key */
  writer: string;
  /** applies one operation once per request id (its answer again for a repeat); throws RecordRefused for a malformed one */
  apply(reqId: string, op: string, args: unknown[]): Promise<unknown>;
}

/** An operation refused as the sender's mistake (unknown, or arguments of the wrong shape): answered `invalid:`. */
export class RecordRefused extends Error {}

/** requests remembered for a repeat, per relay */
const REMEMBERED = 1024;
const recent = new WeakMap<RelayContext, Map<string, Promise<unknown>>>();

export async function handleRecord(h: RelayContext, conn: Connection, reqId: string, op: string, args: unknown[]): Promise<void> {
  const svc = h.records;
  if (!svc) {
    conn.send(recordMessage(reqId, false, 'unsupported: this relay takes no record writes'));
    return;
  }
  if (!conn.authed.has(svc.writer)) {
    h.access.refused('RECORD', 'not authenticated with the local key', conn.ip);
    conn.send(recordMessage(reqId, false, "restricted: only a command holding this data directory's local key (AUTH first) may write the relay's records"));
    return;
  }
  let done = recent.get(h);
  if (!done) recent.set(h, (done = new Map()));
  let p = done.get(reqId);
  if (!p) {
    p = svc.apply(reqId, op, args);
    done.set(reqId, p);
    if (done.size > REMEMBERED) done.delete(done.keys().next().value!);
  }
  try {
    conn.send(recordMessage(reqId, true, await p));
  } catch (e) {
    done.delete(reqId); // not applied: a repeat may try again
    const invalid = e instanceof RecordRefused;
    if (!invalid) h.logger.error({ err: e, op }, 'record write failed');
    conn.send(recordMessage(reqId, false, `${invalid ? 'invalid' : 'error'}: ${(e as Error).message ?? String(e)}`));
  }
}
