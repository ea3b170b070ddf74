// The operator's status page in a real browser: headless Chromium from Debian driven by
// playwright-core. It shows the address to copy, live figures with rates, charts of the last hour
// drawn as inline SVG, refusals by reason in one set of words, and the relay directory — every relay
// the spider knows, sortable and filterable — with /status.json and `orbweaver directory --json`
// giving the same rows. No console errors, no external requests.
// SCREENSHOT=docs/dashboard.png node --test dist/test/ops/dashboard.test.js writes the docs' picture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { chromiumSkip, openBrowser } from '../helpers/browser.js';
import { ROOT, startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { runCliAsync } from '../helpers/cli.js';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

interface Row { url: string; hop: number; state: string; fetched: number | null; stored: number | null; quirks: string[]; lastError: string | null }
interface Status { sections: Array<{ title: string; rows: Array<[string, string]> }>; directory?: { total: number; rows: Row[] }; series: { stored: number[] } }

const cells = (page: Page) => page.$$eval('#directory tbody tr:not([hidden])', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));

test('the status page: address, live figures and charts, refusals by reason, the relay directory', { skip: chromiumSkip() }, async () => {
  // a small network for the spider: the seed's list names a good relay, one that wants AUTH and a dead one
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const good = await new TestRelay({ flavour: 'strfry' }).start();
  const auth = await new TestRelay({ closeWith: 'auth-required: members only' }).start();
  const dead = `ws://127.0.0.1:${await closedPort()}`;
  const seed = keypair();
  bootstrap.add(relayList(seed.sk, T0, [good.url, auth.url, dead]));
  good.add(...Array.from({ length: 5 }, (_, i) => sign(keypair().sk, 0, T0 - i)));

  const relay = await startRelayProcess({
    env: {
      ORBWEAVER_INFO_NAME: 'Dash <Test> Relay',
      ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s', ORBWEAVER_SPIDER_CONNECT_TIMEOUT: '2s',
    },
  });
  const browser = await openBrowser({ width: 1280, height: 900 });
  const problems: string[] = [];
  try {
    // the spider's run at start-up: three relays in the directory
    let status: Status | undefined;
    for (let i = 0; i < 300; i++) {
      status = (await (await fetch(relay.httpUrl + '/status.json')).json()) as Status;
      const runs = status.sections.find((s) => s.title === 'Directory spider')?.rows.find((r) => r[0] === 'runs')?.[1];
      if (runs && Number(runs) >= 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status?.directory?.total, 3, 'three relays in /status.json directory');

    const page = await browser.context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    page.on('request', (r) => { if (!r.url().startsWith(relay.httpUrl)) problems.push(`external request: ${r.url()}`); });
    const resp = await page.goto(relay.httpUrl + '/', { waitUntil: 'load', timeout: 30_000 });
    assert.equal(resp?.status(), 200);
    assert.equal(await page.textContent('#name'), 'Dash <Test> Relay', 'name shown as text, not HTML');
    const title = await page.title();
    assert.match(title, /^Dash <Test> Relay/);
    assert.doesNotMatch(title, /orbweaver — orbweaver|— orbweaver$/);
    assert.equal(await page.textContent('#address'), relay.url, 'the ws:// address to copy');
    assert.ok(await page.isVisible('#copy-address'), 'a copy button');
    const before = Number(await page.textContent('#fig-events')); // the spider stored the seed's list and 5 profiles
    assert.equal(before, 6);

    // activity: 5 stored events, one refused, an open connection
    const c = await Client.open(relay.url);
    const a = new Author();
    for (let i = 0; i < 5; i++) assert.equal((await c.publish(a.sign({ content: `dash ${i}` }))).ok, true);
    assert.equal((await c.publish(a.sign({ content: 'future', created_at: Math.floor(Date.now() / 1000) + 86400 }))).ok, false);
    await c.query({ kinds: [1], limit: 10 });

    // the page picks it up by itself (it polls /status.json); bounded waits
    await page.waitForFunction(`document.getElementById('fig-events')?.textContent === '${before + 5}'`, undefined, { timeout: 20_000 });
    await page.waitForFunction("document.getElementById('fig-connections')?.textContent === '1'", undefined, { timeout: 20_000 });
    await page.waitForFunction("document.getElementById('fig-refused')?.textContent === '1'", undefined, { timeout: 20_000 });
    assert.match(await page.textContent('#rate-stored') ?? '', /\/s/, 'a rate beside the figure');

    // charts: inline SVG, one line per series, the stored line has risen
    for (const id of ['chart-events', 'chart-connections', 'chart-latency', 'chart-reqs']) {
      assert.equal(await page.locator(`#${id} svg`).count(), 1, `${id} is an inline SVG`);
    }
    await page.waitForFunction("(document.querySelector('#chart-events path.line')?.getAttribute('d') ?? '').split(/[ML]/).length > 2", undefined, { timeout: 20_000 });
    const series = ((await (await fetch(relay.httpUrl + '/status.json?directory=0')).json()) as Status).series;
    assert.ok(series.stored.some((v) => v > 0), 'the sampler saw the stored events');

    // refusals: one table, reasons by verb, the same count as the figure
    const refusals = await page.$$eval('#refusals tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('th,td')].map((td) => td.textContent)));
    const invalid = refusals.find((r) => r[0] === 'invalid');
    assert.ok(invalid, `an invalid row: ${JSON.stringify(refusals)}`);
    const head = await page.$$eval('#refusals thead th', (ths) => ths.map((th) => th.textContent));
    assert.equal(invalid[head.indexOf('EVENT')], '1');
    const recent = await page.textContent('#recent-refusals') ?? '';
    assert.match(recent, /created_at is more than/);
    // a public page: how many clients were refused, not who (the operator asks NIP-86 listrefusals)
    assert.match(recent, /to 1 client address/);
    assert.doesNotMatch(recent, /127\.0\.0\.1|client IP/);

    // the directory table: every relay, its state, its events, its error, sortable and filterable
    await page.waitForSelector('#directory tbody tr');
    let rows = await cells(page);
    assert.equal(rows.length, 3);
    const colNames = await page.$$eval('#directory thead th', (ths) => ths.map((th) => (th.textContent ?? '').replace(/[▲▼]/g, '').trim()));
    const col = (n: string) => { const i = colNames.indexOf(n); assert.ok(i >= 0, `column ${n} in ${colNames}`); return i; };
    const byUrl = new Map(rows.map((r) => [r[col('URL')], r]));
    assert.equal(byUrl.get(good.url)?.[col('state')], 'ok');
    assert.equal(byUrl.get(good.url)?.[col('fetched')], '5');
    assert.equal(byUrl.get(good.url)?.[col('stored')], '5');
    assert.equal(byUrl.get(dead)?.[col('state')], 'failed');
    assert.ok((byUrl.get(dead)?.[col('last error')] ?? '').length > 1, 'the dead relay shows its error');
    assert.match(byUrl.get(auth.url)?.[col('quirks')] ?? '', /auth required/);
    assert.match(byUrl.get(good.url)?.[col('last crawl')] ?? '', /UTC/, 'times in UTC');
    assert.match(byUrl.get(good.url)?.[col('hop')] ?? '', /^0$/);
    await page.fill('#dir-filter', 'auth required');
    rows = await cells(page);
    assert.deepEqual(rows.map((r) => r[col('URL')]), [auth.url], 'filtered by text (URL, state, quirks, error)');
    await page.fill('#dir-filter', '');
    await page.click('#dir-states button[data-state="failed"]');
    rows = await cells(page);
    assert.ok(rows.length >= 1 && rows.every((r) => r[col('state')] === 'failed'), 'filtered by state');
    assert.ok(rows.some((r) => r[col('URL')] === dead));
    await page.click('#dir-states button[data-state=""]');
    assert.equal((await cells(page)).length, 3);
    await page.click('#directory thead th[data-key="url"]');
    const asc = (await cells(page)).map((r) => r[col('URL')]);
    assert.deepEqual(asc, [...asc].sort());
    await page.click('#directory thead th[data-key="url"]');
    const desc = (await cells(page)).map((r) => r[col('URL')]);
    assert.deepEqual(desc, [...asc].reverse());

    // the same rows from the command line (read-only, beside the running relay)
    const cli = await runCliAsync(['directory', '--json', '--data', relay.dataDir]);
    assert.equal(cli.status, 0, cli.stderr);
    const fromCli = JSON.parse(cli.stdout) as { rows: Row[] };
    const pick = (r: Row) => [r.url, r.hop, r.state, r.fetched, r.stored, r.quirks.join(','), r.lastError];
    assert.deepEqual(fromCli.rows.map(pick), status!.directory!.rows.map(pick));

    // the spider section counts hops as they are numbered, and the directory as it is
    const spiderRows = Object.fromEntries(status!.sections.find((s) => s.title === 'Directory spider')!.rows);
    assert.equal(spiderRows['relays in the directory'], '3');

    const updated = await page.getAttribute('body', 'data-updated');
    assert.ok(Number(updated) > 0);
    assert.match(await page.textContent('#updated') ?? '', /UTC/);
    if (process.env.SCREENSHOT) await page.screenshot({ path: join(ROOT, process.env.SCREENSHOT), fullPage: true });
    c.close();
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await relay.cleanup();
    await Promise.all([bootstrap.close(), good.close(), auth.close()]);
  }
});

test('the status page with the spider off: a hint instead of an empty table, a `spider --once` beside the relay in the last run, one query-time p95 for card and chart', { skip: chromiumSkip() }, async () => {
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const good = await new TestRelay({ flavour: 'strfry' }).start();
  const seed = keypair();
  bootstrap.add(relayList(seed.sk, T0, [good.url]));
  good.add(...Array.from({ length: 4 }, (_, i) => sign(keypair().sk, 0, T0 - i)));
  const relay = await startRelayProcess();
  const browser = await openBrowser({ width: 1280, height: 900 });
  const spiderRows = async () => Object.fromEntries((((await (await fetch(relay.httpUrl + '/status.json?directory=0')).json()) as Status).sections.find((s) => s.title === 'Directory spider')?.rows ?? []));
  try {
    const page = await browser.context.newPage();
    await page.goto(relay.httpUrl + '/', { waitUntil: 'load', timeout: 30_000 });
    // an empty directory: a sentence saying how to turn the spider on, no table of bare headers
    assert.equal(await page.isVisible('#dir-hint'), true);
    assert.match(await page.textContent('#dir-hint') ?? '', /spider is off: ORBWEAVER_SPIDER=1 \(spider\.enabled\) runs it here, or orbweaver spider --once crawls once/);
    assert.equal(await page.isVisible('#directory'), false, 'no empty table');
    let rows = await spiderRows();
    assert.match(rows.phase, /^off in this relay: ORBWEAVER_SPIDER=1/);
    assert.deepEqual([rows.runs, rows['last run']], ['0', '-']);

    // a one-shot crawl beside the running relay: its run is the page's last run, its relays the table
    const run = await runCliAsync(['spider', '--once', '--data', relay.dataDir], {
      env: { ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s' },
    });
    assert.equal(run.status, 0, run.stderr);
    rows = await spiderRows();
    assert.equal(rows.runs, '1');
    assert.match(rows['last run'], /UTC by orbweaver spider --once: 1 reached, 0 failed, 0 refused, \d+ events stored/);
    await page.waitForFunction("document.querySelectorAll('#directory tbody tr').length === 1", undefined, { timeout: 20_000 });
    assert.equal(await page.isVisible('#dir-hint'), false);
    await page.waitForFunction(`[...document.querySelectorAll('#sections tr')].some((tr) => /last run/.test(tr.textContent) && /spider --once: 1 reached/.test(tr.textContent))`, undefined, { timeout: 20_000 });

    // the query-time card and the chart's legend: one definition (the minute to now), one figure
    const c = await Client.open(relay.url);
    for (let i = 0; i < 5; i++) await c.query({ kinds: [0], limit: 10 });
    c.close();
    await page.waitForFunction("document.getElementById('fig-latency')?.textContent !== '-'", undefined, { timeout: 20_000 });
    const [card, legend] = await page.evaluate("[document.getElementById('fig-latency').textContent, [...document.querySelectorAll('#chart-latency .legend .key')].map((k) => k.textContent)]") as [string, string[]];
    const p95 = legend.find((l) => l.startsWith('p95'));
    assert.match(p95 ?? '', /^p95, 1 min ≤ [\d.]+ ms$/, JSON.stringify(legend));
    assert.equal(card, `≤ ${p95!.replace(/^p95, 1 min ≤ /, '')}`, 'card and legend give the same p95');
  } finally {
    await browser.close();
    await relay.cleanup();
    await Promise.all([bootstrap.close(), good.close()]);
  }
});
