// orbweaver directory [--json] [--relay URL]: every relay the spider knows (and the finder's
// validated ones), with the NIP-66 monitor's health where it checked them, read from the data
// directory (read only: it works beside a running relay). The rows are the status page's table, the
// `directory` part of /status.json and /directory.json, made by the same function
// (src/directory/view.ts); --json prints the /directory.json document, --relay one relay's
// detail (uptime per day, the checks, RTT percentiles, events per kind). What only a running relay
// knows — which relay the spider fetches now, when the next run or monitor cycle starts — is on its
// pages.
import type { Config } from '../config.js';
import { RelayDirectory } from '../directory/records.js';
import { directoryView, formatDirectory, parseServes, rowOf, TEXT_WIDTH, utc, wrap, type DirectoryRow } from '../directory/view.js';
import { normalizeRelayUrl } from '../remote/url.js';
import { directoryDocument, healthLookups, openMonitorRecords, relayDetail, servingAnswer, type RelayDetail, type ServingAnswer } from '../monitor/document.js';
import { monitorInfo } from '../app/directory-pages.js';
import { openCommandStore, rejectUnknown, takeFlag, takeOption, UsageError } from './common.js';
import { parsePubkey } from '../nostr/keys.js';
import { formatPeople, personOf, topPeople } from '../trust/people.js';

export const DIRECTORY_USAGE = `usage: orbweaver directory [--json] [--relay <url>] [--serves <nip>] [--people [n]] [--pubkey <hex|npub>]
  every relay in the directory, in 100 columns: URL, hop, state, last crawl, events fetched /
  stored in it, and the next attempt or — once the NIP-66 monitor checked relays — online, uptime
  over 7 days and read RTT; then the monitor's summary (online now / 24 h / 7 d, networks,
  software, NIPs). Times in UTC.
  --json          the /directory.json document (rows with every field, summary, candidates)
  --relay <url>   one relay in full: crawl, quirks, last error, software, and the monitor's uptime
                  per day, RTT percentiles, NIPs claimed and observed, probes, requirements,
                  certificate, events per kind
  --serves <nip>  the relays online now that the probes saw serve a NIP (50 or search, 45 or
                  count, 77 or negentropy, 42 or auth), lowest measured latency first
  --people [n]    the n (default 50) pubkeys with the highest trust rank: rank, followers, mutes, name
  --pubkey <pk>   one pubkey's trust rank (0-100), followers and mutes`;

const pct = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);

/** One relay in full: its crawl record, and the monitor's figures where it checked it. */
function formatDetail(r: DirectoryRow, d: RelayDetail): string {
  const lines = [
    r.url,
    `  aliases:      ${r.aliases.join(', ') || '-'}${r.aliases.length ? ' (other URLs that reach this relay: crawled and listed as it)' : ''}`,
    `  crawl:        ${r.state}${r.hop >= 0 ? `, hop ${r.hop}` : ', found by the finder'}, last ${utc(r.lastCrawl)}, next attempt ${utc(r.nextAttempt)}`,
    `  events:       ${r.fetched ?? '-'} fetched, ${r.stored ?? '-'} stored in the last crawl; ${r.storedTotal} stored in all`,
    `  quirks:       ${r.quirks.join(', ') || '-'}`,
    `  last error:   ${r.lastError ?? '-'}${r.failures ? ` (${r.failures} failures in a row)` : ''}`,
    `  software:     ${[r.software, r.version].filter(Boolean).join(' ') || '-'}`,
    `  now:          ${r.online === null ? 'not checked yet' : `${r.online ? 'online' : 'offline'} at ${utc(r.lastCheck)}${r.checkError ? ` (${r.checkError})` : ''}`}`,
    `  uptime:       24 h ${pct(d.stats.uptimeDay)}, 7 d ${pct(d.stats.uptimeWeek)}, ${Math.round(d.retentionMs / 86_400_000)} d ${pct(d.stats.uptimeMonth)} (${d.checksInWindow} checks)`,
    `  rtt open:     p50 ${ms(d.stats.rttOpen.p50)}, p90 ${ms(d.stats.rttOpen.p90)}, p99 ${ms(d.stats.rttOpen.p99)}`,
    `  rtt read:     p50 ${ms(d.stats.rttRead.p50)}, p90 ${ms(d.stats.rttRead.p90)}, p99 ${ms(d.stats.rttRead.p99)}`,
    `  network:      ${r.network ?? '-'}`,
    `  NIPs:         ${r.nips.join(', ') || '-'} (published: NIP-11 claims ${r.claimedNips.join(', ') || 'none'}, corrected by the probes)`,
    `  probes:       ${Object.entries(r.probes).map(([n, o]) => `NIP-${n} ${o}`).join(', ') || '-'}${d.probeReport?.cut ? ` (cut short: ${d.probeReport.cut})` : ''}`,
    `  limits:       ${limitsLine(d)}`,
    `  differences:  ${r.differences.join('; ') || 'none: the claims hold'}`,
    `  probe history: ${Object.entries(d.probeStats).map(([n, m]) => `NIP-${n} ${Object.entries(m).map(([o, c]) => `${o} ${c}`).join('/')}`).join(', ') || '-'}`,
    `  requirements: ${r.requirements.join(', ') || '-'}`,
    `  certificate:  ${r.sslExpires ? `${r.sslValid ? 'valid' : 'NOT valid'}, expires ${utc(r.sslExpires)}${r.sslIssuer ? `, issued by ${r.sslIssuer}` : ''}` : '-'}`,
    `  latest 30166: ${d.published ?? '-'}`,
    `  days:         ${d.days.map((x) => (x.checks === 0 ? '.' : x.online === x.checks ? '#' : x.online === 0 ? '_' : '+')).join('')} (30 days to today: # all online, + some, _ none, . not checked)`,
  ];
  if (d.crawl) lines.push(`  by kind:      ${Object.entries(d.crawl.total).map(([k, n]) => `kind ${k}: ${d.crawl!.last[k] ?? 0} last crawl, ${n} in all`).join('; ')}`);
  return lines.flatMap((l) => wrap(l, TEXT_WIDTH, ' '.repeat(16))).join('\n');
}

function limitsLine(d: RelayDetail): string {
  const l = d.probeReport?.limits;
  if (!l) return '-';
  const parts: string[] = [];
  if (l.limit) parts.push(`limit ${l.limit.asked} asked, ${l.limit.got} sent`);
  if (l.filters) parts.push(`${l.filters.asked} filters ${l.filters.accepted ? 'accepted' : 'refused'}`);
  if (l.subscriptions) parts.push(`${l.subscriptions.asked} subscriptions ${l.subscriptions.accepted ? 'accepted' : 'refused'}`);
  return parts.join(', ') || '-';
}

/** The finder's answer as text: one relay a line, fastest first. */
function formatServing(a: ServingAnswer): string {
  if (a.relays.length === 0) return `no relay online now serves NIP-${a.nip} (as the monitor's probes saw it)`;
  const w = Math.min(70, Math.max(...a.relays.map((r) => r.url.length)));
  return [`relays online now serving NIP-${a.nip}, lowest latency first:`, ...a.relays.map((r) => `${r.url.padEnd(w)}  read ${ms(r.rttRead)}  open ${ms(r.rttOpen)}  ${a.nip === 50 || a.nip === 45 || a.nip === 77 ? (r.claimedNips.includes(a.nip) ? 'claimed' : 'NOT claimed') : ''}`.trimEnd())].join('\n');
}

export async function directoryCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { out.write(DIRECTORY_USAGE + '\n'); return 0; }
  const json = takeFlag(args, '--json');
  const relay = takeOption(args, '--relay');
  const servesArg = takeOption(args, '--serves');
  const pubkey = takeOption(args, '--pubkey');
  const peopleAt = args.indexOf('--people');
  let people: number | undefined;
  if (peopleAt >= 0) {
    const n = args[peopleAt + 1];
    const count = n !== undefined && /^\d+$/.test(n) ? Number(n) : undefined;
    args.splice(peopleAt, count === undefined ? 1 : 2);
    people = count ?? 50;
  }
  rejectUnknown(args, ['--json', '--relay', '--serves', '--people', '--pubkey', '--help'], 'directory');
  const servesNip = servesArg === undefined ? null : parseServes(servesArg);
  if (servesArg !== undefined && servesNip === null) throw new UsageError(`--serves: a NIP number (50, 45, 77, 42) or search, count, negentropy, auth: ${servesArg.slice(0, 40)}`);
  const store = await openCommandStore(config);
  try {
    if (pubkey !== undefined) {
      const pk = parsePubkey(pubkey);
      if (!pk) throw new UsageError(`--pubkey: not a pubkey (64 hex characters or npub1…): ${pubkey.slice(0, 80)}`);
      const p = await personOf(store, pk);
      if (json) out.write(JSON.stringify(p) + '\n');
      else out.write((p ? `${pk}${p.name ? ` (${p.name.replace(/[\u0000-\u001f]/g, ' ')})` : ''}: rank ${p.rank}, ${p.followers} followers, ${p.mutes} mutes` : `${pk}: not ranked (in no stored follow or mute list, or no ranking pass yet)`) + '\n');
      return 0;
    }
    if (people !== undefined) {
      const v = await topPeople(store, people);
      out.write((json ? JSON.stringify(v, null, 2) : formatPeople(v)) + '\n');
      return 0;
    }
    const records = openMonitorRecords(store.env, config.spider.monitorRetention);
    const view = directoryView(new RelayDirectory(store.env).all(), {
      now: Date.now(),
      backoff: { base: config.spider.failureBackoff, max: config.spider.maxFailureBackoff },
      ...healthLookups(records.history),
    });
    if (servesNip !== null) {
      const a = servingAnswer(view, servesNip);
      out.write((json ? JSON.stringify(a, null, 2) : formatServing(a)) + '\n');
      return 0;
    }
    if (relay !== undefined) {
      const url = normalizeRelayUrl(relay) ?? relay;
      // an alias shows the relay it reaches
      const row = rowOf(view, url);
      if (!row) throw new UsageError(`${relay} is not in the relay directory of ${config.dataDir}`);
      const detail = relayDetail(row.url, row, records.history);
      out.write((json ? JSON.stringify(detail, null, 2) : formatDetail(row, detail)) + '\n');
      return 0;
    }
    // the monitor is not running in this process: its state is what its records say
    const doc = directoryDocument(view, monitorInfo(config, null), records.candidates);
    out.write((json ? JSON.stringify(doc, null, 2) : formatDirectory(view) + (doc.candidates.total ? `\ncandidates waiting for validation: ${doc.candidates.total}` : '')) + '\n');
  } finally {
    await store.close();
  }
  return 0;
}
