// orbweaver sync <relay-url> [--filter '<filter JSON>'] [--dir down|up|both] [--follow]: reconcile
// the local store with a remote relay through NIP-77 (src/sync), fetch what we lack and publish
// what it lacks. Fetched events take the one ingest path: published to our running relay when it
// answers (so its live subscribers see them), else ingested in this process (app/command-sink.ts).
// Progress on stderr, a summary at the end; exit 0 done, 1 the remote was not reached, 2 error.
import type { Config } from '../config.js';
import { createLogger } from '../lib/logger.js';
import { FilterError, parseFilter, type Filter } from '../nostr/filter.js';
import { openCommandSink, SinkError } from '../app/command-sink.js';
import { connectRemote, emptySummary, follow, syncOnce, type Direction, type SyncSummary } from '../sync/sync.js';
import { SyncError } from '../remote/reconcile.js';
import type { RelayClient } from '../remote/client.js';
import { fmt, takeFlag, takeOption, UsageError } from './common.js';
import { sleep } from '../lib/sleep.js';

export const SYNC_USAGE = `usage: orbweaver sync <relay-url> [--filter '<filter JSON>'] [--dir down|up|both] [--follow]
                     [--json] [--relay ws://host:port | --local]

  reconciles the local store with the relay at <relay-url> through NIP-77 (negentropy) and
  transfers only the difference: down fetches the events we lack (default), up publishes the
  events the remote lacks, both does both.
  --filter <json>  a NIP-01 filter, or a JSON array of filters (default {}: every event)
  --follow         after the catch-up keep a live subscription open (mirror the remote; down only);
                   reconnects and catches up again when the connection drops; stop with SIGINT/SIGTERM
  --json           print the summary as JSON on stdout
  --relay <url>    deliver fetched events to this relay (default: ws://<host>:<port> from config,
                   when it answers; otherwise they are ingested in this process)
  --local          do not look for a running relay: ingest in this process
  exit codes: 0 done, 1 the remote could not be reached, 2 error (refused, timed out, bad answers).
  Settings: negentropy.sync* (see \`orbweaver config --env\`); docs/sync.md.`;

export async function syncCommand(config: Config, argv: string[]): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help') || takeFlag(args, '-h')) {
    process.stdout.write(SYNC_USAGE + '\n');
    return 0;
  }
  const json = takeFlag(args, '--json');
  const followMode = takeFlag(args, '--follow');
  const local = takeFlag(args, '--local');
  const relayUrl = takeOption(args, '--relay');
  const dirArg = takeOption(args, '--dir') ?? 'down';
  const filterArg = takeOption(args, '--filter') ?? '{}';
  const url = args.find((a) => !a.startsWith('-'));
  const unknown = args.filter((a) => a !== url);
  if (unknown.length) throw new UsageError(`unknown option ${unknown[0]}\n${SYNC_USAGE}`);
  if (!url) throw new UsageError(`the remote relay URL is missing\n${SYNC_USAGE}`);
  if (dirArg !== 'down' && dirArg !== 'up' && dirArg !== 'both') throw new UsageError('--dir must be down, up or both');
  const dir: Direction = dirArg;
  if (followMode && dir === 'up') throw new UsageError('--follow mirrors the remote: it needs --dir down or both');
  if (relayUrl && local) throw new UsageError('--relay and --local exclude each other');
  const filters = parseFilters(filterArg, config);

  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  let opened;
  try {
    opened = await openCommandSink(config, logger, { relayUrl, local, label: 'sync' });
  } catch (e) {
    if (!(e instanceof SinkError)) throw e;
    process.stderr.write(`orbweaver sync: ${e.message}\n`);
    return 2;
  }
  const stopper = new AbortController();
  const onSignal = () => stopper.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = progressPrinter();
  const started = Date.now();
  const s = emptySummary(url, dir);
  const opts = { url, filters, dir, store: opened.store, sink: opened.sink, config, logger, onProgress: progress.update, signal: stopper.signal };
  process.stderr.write(`sync ${url}: ${dir === 'down' ? 'fetching what we lack' : dir === 'up' ? 'publishing what it lacks' : 'both directions'}, ${opened.relayUrl ? `delivering to the relay at ${opened.relayUrl}` : 'ingesting in this process'}\n`);

  let code = 0;
  let client: RelayClient | null = null;
  try {
    // the first sync decides the exit code
    const since = Math.floor(Date.now() / 1000) - 60;
    client = await attempt(opts, s, followMode);
    if (!client) code = s.reached ? 2 : 1;
    else if (followMode) {
      if (s.error) {
        code = 2;
        progress.line(`first sync incomplete (${errorText(s)}); following ${url} anyway (SIGINT/SIGTERM to stop)`);
      } else progress.line(`caught up; following ${url} (SIGINT/SIGTERM to stop)`);
      let from = since;
      let wait = 1000;
      while (!stopper.signal.aborted) {
        if (client) {
          await follow(client, opts, s, from);
          client.close();
          client = null;
          if (stopper.signal.aborted) break;
          progress.line(`connection lost; reconnecting in ${wait / 1000} s`);
        }
        await sleep(wait, stopper.signal);
        if (stopper.signal.aborted) break;
        // catch up again with a new reconciliation, then follow from there
        from = Math.floor(Date.now() / 1000) - 60;
        s.error = undefined;
        client = await attempt(opts, s, true);
        if (client) {
          wait = 1000;
          if (s.error) progress.line(`catch-up incomplete (${errorText(s)}); following again`);
        } else {
          progress.line(`sync failed (${errorText(s)}); retrying in ${Math.min(wait * 2, 60_000) / 1000} s`);
          wait = Math.min(wait * 2, 60_000);
        }
      }
    }
  } finally {
    client?.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await opened.close();
  }
  s.seconds = (Date.now() - started) / 1000;
  progress.done();
  process.stderr.write(formatSyncSummary(s) + '\n');
  if (json) process.stdout.write(JSON.stringify(s) + '\n');
  return code;
}

const errorText = (s: SyncSummary): string => s.error?.message ?? 'unknown error';

/** Connects and syncs once; errors land in s.error. Returns the open connection on success, else null. */
/**
 * Connects and syncs once; the open client when done, null on failure (s.error says why). With
 * `keepIfIncomplete` (--follow), a sync that only missed events the remote did not send (deleted
 * meanwhile, say) still hands back its client: the error is reported and following goes on.
 */
async function attempt(opts: Parameters<typeof syncOnce>[1], s: SyncSummary, keepIfIncomplete = false): Promise<RelayClient | null> {
  let client: RelayClient;
  try {
    client = await connectRemote(opts.url, opts.config, opts.signal);
  } catch (e) {
    s.error = { kind: 'connect', message: `could not connect to ${opts.url}: ${(e as Error).message}` };
    return null;
  }
  s.reached = true;
  try {
    await syncOnce(client, opts, s);
    return client;
  } catch (e) {
    if (keepIfIncomplete && e instanceof SyncError && e.kind === 'incomplete' && !client.closeReason) {
      s.error = { kind: e.kind, message: e.message };
      return client;
    }
    client.close();
    if (e instanceof SyncError) s.error = { kind: e.message.startsWith('delivery failed') ? 'delivery' : e.kind, message: e.message };
    else s.error = { kind: 'protocol', message: (e as Error).message };
    return null;
  }
}

function parseFilters(text: string, config: Config): Filter[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError('--filter is not JSON');
  }
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) throw new UsageError('--filter: an empty list of filters');
  try {
    return list.map((f) => parseFilter(f, { maxFilterValues: config.limits.maxFilterValues, maxTagFilters: 16 }));
  } catch (e) {
    if (e instanceof FilterError) throw new UsageError(`--filter: ${e.message}`);
    throw e;
  }
}

const sum = (r: Partial<Record<string, number>>) => Object.values(r).reduce((a: number, b) => a + (b ?? 0), 0);

function progressPrinter() {
  const tty = process.stderr.isTTY === true;
  let last = 0;
  let shown = false;
  const render = (s: SyncSummary) => {
    const r = s.reconcile;
    const d = s.down;
    let line = `${fmt(r.rounds)} rounds: need ${fmt(r.need)}, have ${fmt(r.have)}`;
    if (s.dir !== 'up') line += ` | fetched ${fmt(d.received)}/${fmt(d.requested)}, stored ${fmt(d.statuses.stored ?? 0)}`;
    if (s.dir !== 'down') line += ` | published ${fmt(sum(s.up.statuses))}/${fmt(s.up.offered)}`;
    if (s.followed) line += ` | live ${fmt(s.followed)}`;
    return line;
  };
  return {
    update(s: SyncSummary) {
      const now = Date.now();
      if (now - last < (tty ? 200 : 5000)) return;
      last = now;
      shown = true;
      process.stderr.write(tty ? `\r${render(s)}\x1b[K` : `${render(s)}\n`);
    },
    line(text: string) {
      process.stderr.write(`${tty && shown ? '\n' : ''}${text}\n`);
      shown = false;
    },
    done() {
      if (tty && shown) process.stderr.write('\n');
    },
  };
}

export function formatSyncSummary(s: SyncSummary): string {
  const r = s.reconcile;
  const out = [
    `sync ${s.url} (${s.dir}) in ${s.seconds.toFixed(1)} s: ${s.error ? `FAILED (${s.error.kind}): ${s.error.message}` : 'done'}`,
    `  reconciled   ${fmt(r.sessions)} session(s), ${fmt(r.rounds)} round(s)${r.splits ? `, ${fmt(r.splits)} time split(s)` : ''}, ${fmt(r.bytesUp)} B up / ${fmt(r.bytesDown)} B down`,
    `  difference   we lack ${fmt(r.need)}, they lack ${fmt(r.have)}`,
  ];
  if (s.dir !== 'up') {
    const d = s.down;
    const st = Object.entries(d.statuses).map(([k, v]) => `${k} ${fmt(v ?? 0)}`).join(', ') || 'nothing';
    out.push(`  fetched      ${fmt(d.received)} of ${fmt(d.requested)} asked (${st})${d.missing ? `; ${fmt(d.missing)} not delivered` : ''}${d.dropped ? `; ${fmt(d.dropped)} dropped` : ''}`);
    const closed = Object.entries(d.closed);
    if (closed.length) out.push(`  REQs closed  ${closed.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  if (s.dir !== 'down') {
    const st = Object.entries(s.up.statuses).map(([k, v]) => `${k} ${fmt(v ?? 0)}`).join(', ') || 'nothing';
    out.push(`  published    ${fmt(s.up.offered)} offered (${st})${s.up.gone ? `; ${fmt(s.up.gone)} no longer stored` : ''}`);
    for (const x of s.up.refusals) out.push(`    ${x}`);
  }
  if (s.followed) out.push(`  live         ${fmt(s.followed)} event(s) while following`);
  return out.join('\n');
}
