// Read-side access: auth required to read, and kinds (DMs 4, seals 13, gift wraps 1059 by default) that only
// their author or a p-tagged recipient may read once authenticated. Filters that can only match
// such events are refused unless they are constrained to the authenticated pubkeys (so the client
// knows to AUTH); everything else is filtered event by event on REQ, COUNT and live delivery.
import type { Filter } from '../../nostr/filter.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { ReadContext, RejectFilter } from '../../ingest/hooks.js';
import type { CountResult } from '../../store/types.js';

export type AuthMode = 'off' | 'write' | 'read' | 'all';

export const authToRead = (mode: AuthMode): RejectFilter => (_filters, ctx) =>
  (mode === 'read' || mode === 'all') && !(ctx.authed && ctx.authed.size > 0)
    ? `auth-required: this relay requires authentication (NIP-42) to ${ctx.verb === 'REQ' ? 'read' : 'count'} events`
    : null;

const pTag = (f: Filter) => f.tags?.find(([n]) => n === 'p')?.[1];

/** Whether every event the filter can match in the protected kinds is visible to `authed`. */
export function constrainedTo(f: Filter, authed: ReadonlySet<string>): boolean {
  if (authed.size === 0) return false;
  if (f.authors && f.authors.length > 0 && f.authors.every((a) => authed.has(a))) return true;
  const p = pTag(f);
  return !!p && p.length > 0 && p.every((v) => authed.has(v));
}

const couldMatch = (f: Filter, kinds: ReadonlySet<number>) => !f.kinds || f.kinds.some((k) => kinds.has(k));

export class ProtectedKinds {
  readonly kinds: ReadonlySet<number>;
  constructor(kinds: Iterable<number>) { this.kinds = new Set(kinds); }

  get enabled(): boolean { return this.kinds.size > 0; }

  /** Refuses filters whose kinds are all protected and that are not constrained to the reader. */
  rejectFilter(): RejectFilter {
    return (filters, ctx) => {
      if (!this.enabled) return null;
      const authed = ctx.authed ?? new Set<string>();
      for (const f of filters) {
        if (!f.kinds || f.kinds.length === 0 || !f.kinds.every((k) => this.kinds.has(k))) continue;
        if (constrainedTo(f, authed)) continue;
        return authed.size === 0
          ? `auth-required: kinds ${f.kinds.join(', ')} are only shown to their author or recipient; authenticate (NIP-42) and ask for your own`
          : `restricted: kinds ${f.kinds.join(', ')} are only shown to their author or recipient; ask with authors or #p set to your authenticated pubkey`;
      }
      return null;
    };
  }

  /** Whether a REQ/COUNT with these filters needs per-event filtering for this reader. */
  needsFiltering(filters: Filter[], authed: ReadonlySet<string>): boolean {
    return this.enabled && filters.some((f) => couldMatch(f, this.kinds) && !constrainedTo(f, authed));
  }

  canSee(ev: Pick<NostrEvent, 'kind' | 'pubkey' | 'tags'>, authed: ReadonlySet<string>): boolean {
    if (!this.kinds.has(ev.kind)) return true;
    if (authed.size === 0) return false;
    if (authed.has(ev.pubkey)) return true;
    for (const t of ev.tags) if (t[0] === 'p' && t.length >= 2 && authed.has(t[1])) return true;
    return false;
  }

  /** Same as canSee for a stored event's JSON text, parsing it only when its kind is protected. */
  canSeeJson(json: string, authed: ReadonlySet<string>): boolean {
    const kind = kindOfJson(json);
    if (kind !== null && !this.kinds.has(kind)) return true;
    try {
      return this.canSee(JSON.parse(json) as NostrEvent, authed);
    } catch {
      return false;
    }
  }

  /**
   * COUNT with protected kinds counted only where the reader may see them, exactly:
   * count(F) - count(F within protected kinds) + count(F within protected kinds, by or to the reader).
   * Such a combined count has no HLL registers; it is approximate when count(F) is. The small
   * protected counts run first: count(F) may then use what is left of the read budget for an
   * estimate (store/query.ts) without leaving the others nothing.
   */
  async count(filters: Filter[], authed: ReadonlySet<string>, count: (fs: Filter[]) => Promise<CountResult>): Promise<CountResult> {
    if (!this.needsFiltering(filters, authed)) return count(filters);
    const inProtected: Filter[] = [];
    for (const f of filters) {
      const kinds = (f.kinds ?? [...this.kinds]).filter((k) => this.kinds.has(k));
      if (kinds.length > 0) inProtected.push({ ...f, kinds });
    }
    const visible: Filter[] = [];
    const mine = [...authed];
    for (const f of inProtected) {
      if (mine.length === 0) break;
      const authors = f.authors ? mine.filter((a) => f.authors!.some((x) => a.startsWith(x))) : mine;
      if (authors.length > 0) visible.push({ ...f, authors });
      const p = pTag(f);
      const pv = p ? p.filter((v) => authed.has(v)) : mine;
      if (pv.length > 0) visible.push({ ...f, tags: [...(f.tags ?? []).filter(([n]) => n !== 'p'), ['p', pv]] });
    }
    const hidden = inProtected.length > 0 ? (await count(inProtected)).count : 0;
    const seen = visible.length > 0 ? (await count(visible)).count : 0;
    const all = await count(filters);
    const n = all.count - hidden + seen;
    return all.approximate ? { count: n, approximate: true } : { count: n };
  }
}

/** The kind of a canonical event JSON text ({"id":..,"pubkey":..,"created_at":..,"kind":N,...}). */
export function kindOfJson(json: string): number | null {
  const i = json.indexOf('"kind":');
  if (i < 0) return null;
  let j = i + 7;
  let n = 0;
  let digits = 0;
  while (j < json.length) {
    const c = json.charCodeAt(j);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
    j++;
    digits++;
  }
  return digits > 0 ? n : null;
}

export type { ReadContext };
