// NIP-62 in `orbweaver verify`: the requests to vanish and what they cover. A tombstone is not
// derived from the events (it outlives a request removed by the operator or expired), so it is
// neither rebuilt nor cleared; what is checked is that the store agrees with it:
//   - covered: a stored event a tombstone covers (store/vanish.ts vanishRefusal): the writer
//     deletes them, so one left means a request was not fully applied (the tombstone's flag says
//     so when a process was killed half way) or was written by hand;
//   - untombed: a stored request to vanish without a tombstone up to its created_at.
// The repair (repair.ts) writes the missing tombstones first, leaves out of the rebuilt indexes and
// deletes every covered event, and marks each tombstone applied.
import { VANISH_KIND } from '../../nostr/vanish.js';
import { readVanish, vanishKey, vanishRefusal, vanishTomb, vanishValue } from '../../store/vanish.js';
import { entryCount, type Dbs } from '../../store/schema.js';
import { describe, hex, short, type Parsed } from './stored.js';

export interface VanishSample {
  problem: 'covered' | 'untombed';
  /** the event's id */
  key: string;
  detail: string;
}

export interface VanishReport {
  /** authors with a tombstone */
  tombstones: number;
  /** stored events a request to vanish covers */
  covered: number;
  /** stored requests to vanish without a tombstone up to their created_at */
  untombed: number;
  samples: VanishSample[];
}

/** Whether stored request `p` has a tombstone up to its created_at. */
const tombed = (dbs: Pick<Dbs, 'tombVanish'>, p: Parsed): boolean => (vanishTomb(dbs, p.h.pubkey)?.upTo ?? -1) >= p.h.created_at;

/** Verify's side: each stored event is shown to see(). */
export class VanishCheck {
  private readonly r: VanishReport;
  /** no tombstone at all: nothing is looked up per event */
  private readonly none: boolean;

  constructor(private readonly dbs: Pick<Dbs, 'tombVanish'>, private readonly cap: number) {
    this.r = { tombstones: entryCount(dbs.tombVanish), covered: 0, untombed: 0, samples: [] };
    this.none = this.r.tombstones === 0;
  }

  see(p: Parsed): void {
    if (p.h.kind === VANISH_KIND && !tombed(this.dbs, p)) this.note('untombed', p, `${describe(p)}: a request to vanish by ${short(p.h.pubkey)} without a tombstone up to ${p.h.created_at}`);
    if (this.none) return;
    const why = vanishRefusal(this.dbs, p.ev);
    if (why) this.note('covered', p, `${describe(p)} by ${short(p.h.pubkey)}: ${why.replace(/^blocked: /, '')}`);
  }

  private note(problem: VanishSample['problem'], p: Parsed, detail: string): void {
    this.r[problem]++;
    if (this.r.samples.length < this.cap) this.r.samples.push({ problem, key: p.h.id, detail });
  }

  get differs(): boolean {
    return this.r.covered + this.r.untombed > 0;
  }

  report(): VanishReport {
    return this.r;
  }
}

/** The tombstones still marked as being applied (a process stopped half way), as verify lists a meta value. */
export function pendingVanishMeta(dbs: Pick<Dbs, 'tombVanish'>): Array<{ key: string; found: unknown; expected: unknown; detail: string }> {
  const out: Array<{ key: string; found: unknown; expected: unknown; detail: string }> = [];
  for (const { key, value } of dbs.tombVanish.getRange({})) {
    const t = readVanish(value);
    if (!t?.pending) continue;
    out.push({ key: `vanish ${hex(key)}`, found: 'being applied', expected: 'applied', detail: `the request to vanish up to ${t.upTo} was not fully applied (a process stopped half way): opening the store for writing (starting the relay, an import, verify --repair) deletes what it covers` });
  }
  return out;
}

/** The repair's side (repair.ts): missing tombstones written, covered events found, every tombstone marked applied. */
export class VanishRepair {
  /** tombstones written for stored requests that had none */
  restored = 0;

  constructor(private readonly dbs: Pick<Dbs, 'tombVanish'>) {}

  /** Writes the tombstone a stored request calls for (inside the caller's write transaction); returns entries written. */
  tomb(p: Parsed): number {
    if (p.h.kind !== VANISH_KIND || tombed(this.dbs, p)) return 0;
    this.dbs.tombVanish.putSync(vanishKey(p.h.pubkey), vanishValue({ upTo: p.h.created_at, pending: true }));
    this.restored++;
    return 1;
  }

  /** Why a request to vanish covers the stored event (it is deleted, not indexed), or null. */
  covers(p: Parsed): string | null {
    return vanishRefusal(this.dbs, p.ev);
  }

  /** Every tombstone marked applied: the repair deleted what each covers (inside a write transaction). */
  applied(): void {
    for (const { key, value } of [...this.dbs.tombVanish.getRange({})]) {
      const t = readVanish(value);
      if (t?.pending) this.dbs.tombVanish.putSync(key, vanishValue({ upTo: t.upTo, pending: false }));
    }
  }
}
