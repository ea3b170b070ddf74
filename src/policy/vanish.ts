// NIP-62 as a write rule: which requests to vanish this relay takes, from every source. A request
// naming this relay or ALL_RELAYS is taken (the store then applies it: store/vanish.ts); one that
// names only other relays is refused and not stored: it asks nothing of this relay, and NIP-62
// asks clients to send it to its targets only, so keeping and serving it would spread a request
// its author meant for others. A kind 62 without a relay tag is invalid (NIP-62: it MUST have one).
//
// "This relay" is every name it answers to: publicUrl, spider.selfUrls, auth.relayHosts and the
// listen address from the configuration, which every command knows (`import`, `sync`, a spider
// without a relay), and once the relay listens the addresses it listens on (app.ts adds them: with
// port 0 only then is the port known). Schemes do not count (nostr/vanish.ts relayName): a relay
// behind a TLS proxy is wss://name to its users and ws://host:port to itself.
import type { Config } from '../config.js';
import type { RejectEvent } from '../ingest/hooks.js';
import { relayName, VANISH_KIND, vanishScope } from '../nostr/vanish.js';

export class RelayNames {
  private readonly names = new Set<string>();

  constructor(urls: Iterable<string> = []) {
    this.add(urls);
  }

  add(urls: Iterable<string>): void {
    for (const u of urls) {
      const n = relayName(u);
      if (n !== null) this.names.add(n);
    }
  }

  /** Whether `url` names this relay. */
  has(url: string): boolean {
    const n = relayName(url);
    return n !== null && this.names.has(n);
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::', '']);

/** The relay URLs the configuration names as this relay's (see the top of this file). */
export function configuredRelayUrls(config: Pick<Config, 'publicUrl' | 'host' | 'port' | 'auth'> & { spider: Pick<Config['spider'], 'selfUrls'> }): string[] {
  const out = [...(config.publicUrl ? [config.publicUrl] : []), ...config.spider.selfUrls];
  for (const h of config.auth.relayHosts.map((x) => x.trim()).filter(Boolean)) out.push(`ws://${h}`);
  if (config.port > 0) {
    const host = config.host.trim().replace(/^\[|\]$/g, '');
    const hosts = LOOPBACK.has(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
    for (const h of hosts) out.push(`ws://${h}:${config.port}`);
  }
  return out;
}

/** Refuses a request to vanish that does not name this relay (or all relays); other kinds pass. */
export const vanishTargets = (names: RelayNames): RejectEvent => ({ event }) => {
  if (event.kind !== VANISH_KIND) return null;
  switch (vanishScope(event, (u) => names.has(u))) {
    case 'all':
    case 'this':
      return null;
    case 'elsewhere':
      return 'blocked: this request to vanish (NIP-62) names other relays, not this one';
    case 'none':
      return 'invalid: a request to vanish (NIP-62) must name this relay or ALL_RELAYS in a relay tag';
  }
};

/**
 * NIP-62: "relays that restrict who can post MUST also follow the request to vanish regardless of
 * the user's status". A rule about who the author is (allow and ban lists, kind lists, AUTH to
 * write, the web of trust, proof of work) does not hold a request to vanish back; the rules about
 * the event itself (sizes, created_at, expiry, a banned event id) and the connection (a blocked
 * IP, rate limits) still do.
 */
export const exceptVanish = (rule: RejectEvent | null): RejectEvent | null =>
  rule && ((e, ctx) => (e.event.kind === VANISH_KIND ? null : rule(e, ctx)));
