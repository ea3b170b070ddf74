// The URLs this relay answers to, for the NIP-42 relay tag and the NIP-98 u tag. Never derived
// from the client's Host header: a client chooses that header, so trusting it let a page signed by
// a victim for wss://evil.example (with our challenge) authenticate here as the victim. Accepted:
// publicUrl when set; otherwise the relay's own listen address(es) — every interface address when
// it listens on all of them — and "localhost" for a loopback or wildcard listener; plus, either
// way, the operator's auth.relayHosts.
import { networkInterfaces } from 'node:os';
import { normaliseRelayUrl } from './nip42.js';
import { normaliseHttpUrl } from './nip98.js';

const bracket = (h: string) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

/** host:port names of a listener on `host` (0.0.0.0 / :: mean every interface). */
export function listenHosts(host: string, port: number): string[] {
  const h = host.trim().replace(/^\[|\]$/g, '');
  const wildcard = h === '0.0.0.0' || h === '::' || h === '';
  let addrs: string[];
  if (wildcard) {
    addrs = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && (h !== '0.0.0.0' || a.family === 'IPv4'))
      .map((a) => a!.address.replace(/%.*$/, ''));
  } else addrs = [h];
  const loopback = wildcard || addrs.some((a) => a === '::1' || a.startsWith('127.'));
  if (loopback) addrs.push('localhost');
  return [...new Set(addrs)].map((a) => `${bracket(a)}:${port}`);
}

export class OwnUrls {
  private hosts: string[] = [];

  constructor(private readonly publicUrl: string, private readonly relayHosts: string[]) {}

  /** Called once the relay listens (the port may have been 0 until then). */
  listening(host: string, port: number): void {
    this.hosts = listenHosts(host, port);
  }

  private names(): string[] {
    return [...(this.publicUrl ? [] : this.hosts), ...this.relayHosts.map((h) => h.trim()).filter(Boolean)];
  }

  /** What an AUTH event's relay tag may name, normalised (normaliseRelayUrl). */
  relayUrls(): string[] {
    const out = this.publicUrl ? [normaliseRelayUrl(this.publicUrl)] : [];
    for (const h of this.names()) out.push(normaliseRelayUrl(`ws://${h}`), normaliseRelayUrl(`wss://${h}`));
    return out;
  }

  /** What a NIP-98 u tag may name for a request to `path` (with its query), normalised (normaliseHttpUrl). */
  httpUrls(path: string): string[] {
    const out = this.publicUrl ? [normaliseHttpUrl(this.publicUrl.replace(/\/+$/, '') + (path === '/' ? '' : path))] : [];
    for (const h of this.names()) out.push(normaliseHttpUrl(`http://${h}${path}`), normaliseHttpUrl(`https://${h}${path}`));
    return out;
  }
}
