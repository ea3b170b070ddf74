// Where fetched events go: always through the relay's one ingest path. Either in-process (the
// relay's Ingest function, below) or over the network to a running relay (src/remote/deliver.ts: NIP-01 EVENT
// after optional NIP-42 AUTH, retried until the relay decides), which `orbweaver spider --once`
// uses to reach the live subscribers of a relay that is already running, and workers use to
// deliver to their home relay.
import type { Ingest, IngestStatus } from './types.js';
import type { NostrEvent } from '../nostr/event.js';

export interface EventSink {
  readonly kind: 'ingest' | 'remote';
  /** Hands one event on; resolves with what the ingest path decided (which checks it unless it holds its proof). */
  put(ev: NostrEvent): Promise<IngestStatus>;
  /**
   * What the home already holds, for each event: 'duplicate', 'replaced' (a newer version is held),
   * 'deleted', or null (send it). Remote sinks ask the home relay; an in-process sink has none:
   * the spider asks the store it writes into (src/spider/fetch/admit.ts storeKnown).
   */
  known?(evs: NostrEvent[]): Promise<Array<IngestStatus | null>>;
  close(): Promise<void>;
}

export function ingestSink(ingest: Ingest): EventSink {
  return {
    kind: 'ingest',
    async put(ev) {
      // No promise about the event rides along: the ingest path checks it, unless this very object
      // passed a check in this process unchanged (the spider's, nostr/verify.ts verifiedJson).
      try { return (await ingest(ev, { source: 'spider' })).status; } catch { return 'rejected'; }
    },
    async close() {},
  };
}

/** Maps an OK from a remote relay to an ingest status. */
export function statusFromOk(ok: boolean, message: string): IngestStatus {
  const m = message.toLowerCase();
  if (m.startsWith('duplicate:')) {
    // Several relays answer an older replaceable version with a duplicate-prefixed text.
    if (/newer|replaced|older/.test(m)) return 'replaced';
    return 'duplicate';
  }
  if (ok) return 'stored';
  if (m.startsWith('invalid:')) return 'invalid';
  if (/delet/.test(m)) return 'deleted';
  if (/newer|replaced|older version/.test(m)) return 'replaced';
  return 'rejected';
}
