// Makes the status page screenshot of the docs (docs/dashboard.png) from a relay that has done some
// work: a spider crawl over small fake relays (strfry-, nostream- and nostr-rs-relay-like ones, one
// that wants AUTH, one that never sends EOSE, one that rate-limits, dead ones) and a few minutes of
// clients publishing, querying and being refused. Everything on 127.0.0.1; not part of `npm test`.
//   node dist/test/ops/dashboard-demo.js [--minutes 6] [--out docs/dashboard.png]
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import { deadUrl } from '../fixtures/fake-relay.js';

const arg = (name: string, def: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : def; };
const minutes = Number(arg('--minutes', '6'));
const out = join(ROOT, arg('--out', 'docs/dashboard.png'));
const T0 = Math.floor(Date.now() / 1000) - 86_400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const profiles = (n: number, kind = 0) => Array.from({ length: n }, (_, i) => sign(keypair().sk, kind, T0 - i * 7));

async function main() {
  const hop1 = [await new TestRelay({ flavour: 'strfry' }).start(), await new TestRelay({ flavour: 'rs' }).start()];
  hop1[0].add(...profiles(80), ...profiles(40, 3));
  hop1[1].add(...profiles(40, 10002));
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const b = await new TestRelay({ flavour: 'nostream' }).start();
  const c = await new TestRelay({ flavour: 'rs' }).start();
  const auth = await new TestRelay({ closeWith: 'auth-required: members only' }).start();
  const silent = await new TestRelay({ flavour: 'plain', noEose: true }).start();
  const limited = await new TestRelay({ flavour: 'strfry', rateLimitFirst: 3 }).start();
  const dead = [await deadUrl(), await deadUrl()];
  a.add(relayList(keypair().sk, T0, [hop1[0].url, dead[1]]), ...profiles(200), ...profiles(60, 3));
  b.add(...profiles(150), ...profiles(30, 10000));
  c.add(relayList(keypair().sk, T0, [hop1[1].url]), ...profiles(100));
  silent.add(...profiles(50));
  limited.add(...profiles(60));
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const seeds = [keypair(), keypair(), keypair()];
  bootstrap.add(relayList(seeds[0].sk, T0, [a.url, b.url, c.url]), relayList(seeds[1].sk, T0, [auth.url, silent.url, dead[0]]), relayList(seeds[2].sk, T0, [limited.url, a.url]));
  const fakes = [...hop1, a, b, c, auth, silent, limited, bootstrap];

  const relay = await startRelayProcess({
    env: {
      ORBWEAVER_INFO_NAME: 'relay.example.com', ORBWEAVER_PUBLIC_URL: 'wss://relay.example.com',
      ORBWEAVER_INFO_DESCRIPTION: 'A community relay with a directory of the network around it',
      ORBWEAVER_POLICY_KIND_DENY: '1984',
      ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_SEEDS: seeds.map((s) => s.pk).join(','), ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_HOPS: '1', ORBWEAVER_SPIDER_PAUSE: '200ms', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s',
      ORBWEAVER_SPIDER_CONNECT_TIMEOUT: '2s', ORBWEAVER_SPIDER_RATE_LIMIT_BACKOFF: '200ms',
    },
  });
  console.error(`relay at ${relay.httpUrl}; ${minutes} minutes of traffic`);
  const authors = Array.from({ length: 20 }, () => new Author());
  const clients: Client[] = [];
  const begin = Date.now();
  let n = 0;
  let stop = false;
  const traffic = (async () => {
    while (!stop) {
      const t = (Date.now() - begin) / 1000;
      // connections come and go; the publishing rate swells and ebbs
      const wantConns = Math.round(6 + 5 * Math.sin(t / 50));
      while (clients.length < wantConns) clients.push(await Client.open(relay.url));
      while (clients.length > wantConns) clients.pop()!.close();
      const perSecond = Math.round(4 + 12 * Math.sin(t / 35) ** 2);
      for (let i = 0; i < perSecond; i++) {
        const cl = clients[n % clients.length];
        const au = authors[n % authors.length];
        n++;
        if (n % 41 === 0) cl.send(['EVENT', au.sign({ content: 'from the future', created_at: Math.floor(Date.now() / 1000) + 7200 })]);
        else if (n % 53 === 0) cl.send(['EVENT', au.sign({ kind: 1984, content: 'report' })]);
        else if (n % 97 === 0) cl.send('["EVENT", not json');
        else cl.send(['EVENT', au.sign({ content: `note ${n}`, tags: [['t', 'demo']] })]);
      }
      for (let q = 0; q < 2 + (n % 3); q++) clients[q % clients.length].send(['REQ', `feed${q}`, q % 2 ? { kinds: [1], limit: 50 } : { authors: [authors[q].pk], kinds: [0, 1], limit: 20 }]);
      await sleep(1000);
      for (const cl of clients) cl.inbox.length = 0;
    }
  })();
  await sleep(minutes * 60_000);
  // the page is taken while the traffic goes on
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(relay.httpUrl + '/', { waitUntil: 'load' });
    await sleep(2500);
    await page.screenshot({ path: out, fullPage: true });
    console.error(`wrote ${out}`);
  } finally {
    stop = true;
    await traffic;
    await browser.close();
    for (const cl of clients) cl.close();
    await relay.cleanup();
    await Promise.all(fakes.map((f) => f.close()));
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
