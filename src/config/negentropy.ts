// NIP-77 negentropy settings: what the relay serves (limits answered with NEG-ERR) and how
// `orbweaver sync` reconciles with a remote relay. Owned by src/relay/handlers/neg.ts and
// src/sync; documented in docs/sync.md.
import { z } from 'zod';
import { bool, duration, int } from './fields.js';

export const negentropySchema = z
  .object({
    enabled: bool(true, 'serve NIP-77 (NEG-OPEN, NEG-MSG, NEG-CLOSE) and list 77 in NIP-11'),
    maxRecords: int(1_000_000, 'most events one NEG-OPEN may reconcile; more is refused with NEG-ERR blocked: (narrow the filter or its since/until)', 1),
    maxTotalRecords: int(5_000_000, 'most records held by all open negentropy sessions together (36 bytes each); a NEG-OPEN past it is refused with NEG-ERR rate-limited:', 1),
    maxRecordsPerIp: int(2_000_000, 'most records held by the open negentropy sessions of one IP (IPv6: one /64), its share of maxTotalRecords so one address cannot hold them all; past it NEG-ERR rate-limited:', 1),
    maxSessions: int(8, 'open negentropy sessions per connection; more is refused with NEG-ERR blocked:', 1, 1024),
    frameSizeLimit: int(500_000, 'largest negentropy message the relay sends, bytes before hex encoding (the reference minimum is 4096)', 4096),
    idleTimeout: duration('2m', 'a session without a NEG-MSG this long is closed with NEG-ERR closed:'),
    scanBudget: int(4_000_000, 'index entries one NEG-OPEN may read to collect its records (the REQ budget is read.scanBudget); past it NEG-ERR blocked:', 100),
    syncFrameSizeLimit: int(60_000, 'orbweaver sync: largest negentropy message sent to the remote, bytes before hex encoding (60000 keeps NEG-MSG under the common 128 KiB message limit)', 4096),
    syncTimeout: duration('30s', 'orbweaver sync: how long to wait for an answer (NEG-MSG, EOSE, OK) before giving up on the remote'),
    syncDeadline: duration('1h', 'orbweaver sync: the longest one catch-up (reconciliation and fetching) may take; past it the sync stops with exit 2 (bounds a remote that answers just within syncTimeout forever)'),
    syncBatch: int(100, 'orbweaver sync: event ids per REQ when fetching what we lack', 1, 5000),
  })
  .strict()
  .prefault({})
  .describe('NIP-77 negentropy: serving limits and the sync command');
