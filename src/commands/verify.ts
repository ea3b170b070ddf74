// orbweaver verify [--repair] [--json]: checks every derived index of the event store against the
// stored events (src/commands/check/verify.ts) and prints what differs; --repair rebuilds them from the
// events. Both need the store to themselves: refused while a relay runs on the data directory
// (verify reads in many short transactions and would take the relay's writes for differences;
// repair rewrites every index).
import type { Config } from '../config.js';
import { checkDataDir } from '../app/data-dir.js';
import { describeOwner, liveOwner } from '../app/owner.js';
import { storeMapOptions } from '../config/relay.js';
import { storeSearchOptions } from '../config/search.js';
import { commandLogger } from '../lib/logger.js';
import { openStore } from '../store/index.js';
import { repairStore, type RepairReport } from './check/repair.js';
import { StoreVersionError, verifyStore, type Progress, type VerifyReport } from './check/verify.js';
import { storeDbs } from '../store/schema.js';
import { fmt, rejectUnknown, takeFlag, takeOption, UsageError } from './common.js';

export const VERIFY_USAGE = `usage: orbweaver verify [--json] [--samples N] [--repair]
  checks that every derived index of the store (ids, addresses, the time-ordered and tag indexes,
  expiry, search, the follow graph, the NIP-45 counts) matches the stored events, and prints per
  index its entries, the entries expected, and those missing, extra or wrong, with up to N of each
  index's differences listed (--samples, default 20). Exit code 0: clean, 1: differences found.
  --repair: rebuild every derived index from the events (of two stored copies the rules would not
  both keep, the one they drop is deleted), then verify again. --json: the report as JSON on stdout.
  Progress on stderr. Needs the store to itself: refused while a relay runs on the data directory.`;

function progressLine(p: Progress): void {
  const pct = p.total > 0 ? ` (${Math.min(100, Math.floor((100 * p.done) / p.total))}%)` : '';
  process.stderr.write(`verify: ${p.phase} ${fmt(p.done)} / ${fmt(p.total)}${pct}, ${fmt(p.rate)}/s\n`);
}

const differences = (r: VerifyReport): number =>
  r.indexes.reduce((n, x) => n + x.missing + x.extra + x.wrong, 0) + r.duplicates.count + r.meta.length + r.vanish.covered + r.vanish.untombed;

function summary(dataDir: string, r: VerifyReport): string {
  const col = (s: string | number, w: number) => (typeof s === 'number' ? fmt(s) : s).padStart(w);
  const out = [
    `data directory  ${dataDir}`,
    `events          ${fmt(r.events)}${r.unreadable.count ? ` (${fmt(r.unreadable.count)} whose JSON does not parse, checked by their header: serials ${r.unreadable.serials.join(', ')})` : ''}`,
    `${'index'.padEnd(12)}${col('entries', 12)}${col('expected', 12)}${col('missing', 9)}${col('extra', 9)}${col('wrong', 9)}`,
    ...r.indexes.map((x) => `${x.name.padEnd(12)}${col(x.entries, 12)}${col(x.expected, 12)}${col(x.missing, 9)}${col(x.extra, 9)}${col(x.wrong, 9)}`),
  ];
  for (const x of r.indexes) {
    if (!x.samples.length) continue;
    const total = x.missing + x.extra + x.wrong;
    out.push('', `${x.name}: ${fmt(total)} difference${total === 1 ? '' : 's'}${x.samples.length < total ? ` (the first ${x.samples.length})` : ''}`);
    for (const s of x.samples) out.push(`  ${s.problem.padEnd(7)} ${s.key}  ${s.detail}`);
  }
  if (r.duplicates.count) {
    out.push('', `stored copies the rules would not keep: ${fmt(r.duplicates.count)}`);
    for (const d of r.duplicates.samples) out.push(`  ${d.what.padEnd(7)} serial ${d.serial} (kept: ${d.kept})  ${d.detail}`);
  }
  if (r.vanish.tombstones || r.vanish.covered || r.vanish.untombed) {
    const v = r.vanish;
    out.push('', `requests to vanish (NIP-62): ${fmt(v.tombstones)} author${v.tombstones === 1 ? '' : 's'}; stored events they cover: ${fmt(v.covered)}; stored requests without their tombstone: ${fmt(v.untombed)}`);
    for (const s of v.samples) out.push(`  ${s.problem.padEnd(8)} ${s.key}  ${s.detail}`);
  }
  if (r.meta.length) {
    out.push('', 'meta');
    for (const m of r.meta) out.push(`  ${m.key}: ${JSON.stringify(m.found) ?? 'absent'}, expected ${JSON.stringify(m.expected) ?? 'absent'}  (${m.detail})`);
  }
  for (const n of r.notes) out.push('', `note: ${n}`);
  const d = differences(r);
  out.push('', d === 0
    ? `clean: every derived index matches the ${fmt(r.events)} stored events (${r.seconds.toFixed(1)} s)`
    : `${fmt(d)} difference${d === 1 ? '' : 's'} found (${r.seconds.toFixed(1)} s): with the relay stopped, orbweaver verify --repair rebuilds the derived indexes from the events`);
  return out.join('\n') + '\n';
}

function repairSummary(r: RepairReport): string {
  const out = [`repair: indexed ${fmt(r.events)} events in ${r.seconds.toFixed(1)} s`];
  for (const x of r.removed) out.push(`  deleted serial ${x.serial} (event ${x.id}): ${x.why}`);
  if (r.vanishTombstones) out.push(`  requests to vanish (NIP-62): ${r.vanishTombstones} tombstone${r.vanishTombstones === 1 ? '' : 's'} written for stored requests that had none`);
  if (r.pubkeyIds.rebuilt) out.push(`  pubkey ids: idpk rebuilt from pkid${r.pubkeyIds.removed ? `, ${r.pubkeyIds.removed} pubkeys whose id another held lost it` : ''}`);
  return out.join('\n') + '\n';
}

export async function verifyCommand(config: Config, argv: string[]): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { process.stdout.write(VERIFY_USAGE + '\n'); return 0; }
  const json = takeFlag(args, '--json');
  const repair = takeFlag(args, '--repair');
  const samples = Number(takeOption(args, '--samples') ?? 20);
  rejectUnknown(args, ['--json', '--repair', '--samples', '--help'], 'verify');
  if (!Number.isInteger(samples) || samples < 0) throw new UsageError('--samples must be a non-negative integer');
  checkDataDir(config.dataDir, 'existing');
  const owner = liveOwner(config.dataDir);
  if (owner) {
    throw new UsageError(`${describeOwner(owner)} is running on ${config.dataDir}: stop it first. ${repair ? 'A repair rewrites every index and needs the store to itself' : 'Verify reads the store in many short transactions and would take the relay\'s writes for differences'}; then run orbweaver verify${repair ? ' --repair' : ''} again`);
  }
  // --repair opens the store for writing (which migrates an older schema and rebuilds a search
  // index built for other kinds first), verify reads only
  const store = await openStore({ ...storeMapOptions(config), search: storeSearchOptions(config), logger: commandLogger(config), readOnly: !repair, repairing: repair });
  let report: VerifyReport;
  let repaired: RepairReport | undefined;
  try {
    const dbs = storeDbs(store);
    if (repair) {
      repaired = await repairStore(store.env, dbs, { onProgress: (p) => progressLine({ ...p, phase: `repair: ${p.phase}` }) });
      if (!json) process.stderr.write(repairSummary(repaired));
    }
    report = await verifyStore(store.env, dbs, { samples, onProgress: progressLine });
  } catch (e) {
    if (e instanceof StoreVersionError) throw new UsageError(`${e.message}; run orbweaver verify --repair, or start the relay once, to migrate it`);
    throw e;
  } finally {
    await store.close();
  }
  if (json) process.stdout.write(JSON.stringify(repaired ? { repair: repaired, verify: report } : report, null, 2) + '\n');
  else process.stdout.write(summary(config.dataDir, report));
  return report.clean ? 0 : 1;
}
