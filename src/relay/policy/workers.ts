// Spider workers (`orbweaver worker`, docs/scaling.md) publish what they fetch to the relay over
// NIP-01 after NIP-42 AUTH with their key. A connection authenticated as one of the configured
// spider.workerPubkeys is exempt from the rate limits (a worker delivers a whole relay's directory
// events in a burst); every other rule of the ingest path applies to its events as to anyone's.
// The relay also trusts its data directory's local key (app/local-key.ts) this way.
import { parsePubkey } from '../../nostr/keys.js';

export class SpiderWorkers {
  private readonly keys: Set<string>;

  constructor(pubkeys: string[]) {
    const bad = pubkeys.filter((p) => parsePubkey(p) === null);
    if (bad.length) throw new Error(`spider.workerPubkeys: not a hex or npub pubkey: ${bad[0]}`);
    this.keys = new Set(pubkeys.map((p) => parsePubkey(p) as string));
  }

  get size(): number { return this.keys.size; }

  /** Trusts one more pubkey (hex) as a worker. */
  trust(pubkey: string): void { this.keys.add(pubkey); }

  /** true when the connection authenticated as a spider worker */
  any(authed: ReadonlySet<string>): boolean {
    if (this.keys.size === 0 || authed.size === 0) return false;
    for (const p of authed) if (this.keys.has(p)) return true;
    return false;
  }
}
