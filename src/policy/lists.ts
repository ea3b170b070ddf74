// The operator's lists: banned/allowed pubkeys, allowed/disallowed kinds, blocked IPs, banned
// events and NIP-11 overrides. Config entries are fixed; NIP-86 changes persist in one named LMDB
// database ("orbweaver.admin") in the store's environment and apply at once, without restart.
import type { Database, RootDatabase } from 'lmdb';
import { parsePubkey } from '../nostr/keys.js';
import type { Config } from '../config.js';
import { CidrSet } from './cidr.js';
import { KindSet } from './kinds.js';

export type ListName = 'bannedPubkeys' | 'allowedPubkeys' | 'allowedKinds' | 'deniedKinds' | 'blockedIps' | 'bannedEvents' | 'info';

export interface Entry { key: string; reason: string }


function pubkeys(list: string[], what: string): Set<string> {
  const out = new Set<string>();
  for (const s of list) {
    const h = parsePubkey(s);
    if (!h) throw new Error(`${what}: not a hex or npub pubkey: ${s}`);
    out.add(h);
  }
  return out;
}

export class AccessLists {
  // fixed by config
  readonly configBanned: Set<string>;
  readonly configAllowed: Set<string>;
  readonly configKindAllow: KindSet;
  readonly configKindDeny: KindSet;
  readonly configIpDeny: CidrSet;
  readonly ipAllow: CidrSet;
  readonly admins: Set<string>;
  // changed through NIP-86
  private lists = new Map<ListName, Map<string, string>>();
  private ipBlocked = new CidrSet();
  private db: Database<string, string> | null = null;

  constructor(private config: Config) {
    const p = config.policy;
    this.configBanned = pubkeys(p.pubkeyDeny, 'policy.pubkeyDeny');
    this.configAllowed = pubkeys(p.pubkeyAllow, 'policy.pubkeyAllow');
    this.configKindAllow = new KindSet(p.kindAllow);
    this.configKindDeny = new KindSet(p.kindDeny);
    this.configIpDeny = new CidrSet();
    for (const c of p.ipDeny) if (!this.configIpDeny.add(c)) throw new Error(`policy.ipDeny: not an IP or CIDR: ${c}`);
    this.ipAllow = new CidrSet();
    for (const c of p.ipAllow) if (!this.ipAllow.add(c)) throw new Error(`policy.ipAllow: not an IP or CIDR: ${c}`);
    this.admins = pubkeys(config.adminPubkeys, 'adminPubkeys');
    for (const n of ['bannedPubkeys', 'allowedPubkeys', 'allowedKinds', 'deniedKinds', 'blockedIps', 'bannedEvents', 'info'] as ListName[]) this.lists.set(n, new Map());
  }

  /** Loads the persisted lists from the store's LMDB environment and applies NIP-11 overrides. */
  open(env: RootDatabase): void {
    this.db = env.openDB<string, string>({ name: 'orbweaver.admin' });
    for (const { key, value } of this.db.getRange({})) {
      const i = key.indexOf(':');
      const list = this.lists.get(key.slice(0, i) as ListName);
      if (list) list.set(key.slice(i + 1), value);
    }
    for (const ip of this.lists.get('blockedIps')!.keys()) this.ipBlocked.add(ip);
    this.applyInfo();
  }

  private applyInfo(): void {
    for (const [k, v] of this.lists.get('info')!) if (k === 'name' || k === 'description' || k === 'icon') this.config.info[k] = v;
  }

  list(name: ListName): Entry[] {
    return [...this.lists.get(name)!].map(([key, reason]) => ({ key, reason }));
  }

  has(name: ListName, key: string): boolean { return this.lists.get(name)!.has(key); }

  async put(name: ListName, key: string, reason = ''): Promise<void> {
    this.lists.get(name)!.set(key, reason);
    if (name === 'blockedIps') this.ipBlocked.add(key);
    if (name === 'info') this.applyInfo();
    await this.db?.put(`${name}:${key}`, reason);
  }

  async delete(name: ListName, key: string): Promise<boolean> {
    const had = this.lists.get(name)!.delete(key);
    if (name === 'blockedIps') this.ipBlocked.remove(key);
    await this.db?.remove(`${name}:${key}`);
    return had;
  }

  // the questions the policies ask
  pubkeyBanned(pk: string): boolean { return this.configBanned.has(pk) || this.lists.get('bannedPubkeys')!.has(pk); }
  pubkeyAllowListActive(): boolean { return this.configAllowed.size > 0 || this.lists.get('allowedPubkeys')!.size > 0; }
  pubkeyAllowed(pk: string): boolean { return this.configAllowed.has(pk) || this.lists.get('allowedPubkeys')!.has(pk); }
  kindDenied(k: number): boolean { return this.lists.get('deniedKinds')!.has(String(k)) || (this.configKindDeny.has(k) && !this.lists.get('allowedKinds')!.has(String(k))); }
  kindAllowListActive(): boolean { return this.configKindAllow.size > 0 || this.lists.get('allowedKinds')!.size > 0; }
  kindAllowed(k: number): boolean { return this.configKindAllow.has(k) || this.lists.get('allowedKinds')!.has(String(k)); }
  eventBanned(id: string): boolean { return this.lists.get('bannedEvents')!.has(id); }
  ipBlockedNow(ip: string): boolean { return this.configIpDeny.has(ip) || this.ipBlocked.has(ip); }
  ipAllowedToConnect(ip: string): boolean { return this.ipAllow.size === 0 || this.ipAllow.has(ip); }
}
