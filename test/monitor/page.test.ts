// /directory in a real browser (headless Chromium from Debian through playwright-core), on a relay
// whose data directory holds 30 days of monitor history and whose monitor adds a live check per
// relay: the figures and views, the sortable, filterable table, a relay's detail with its uptime
// bar and RTT chart as inline SVG, the status page's links into it. The page shows what
// /directory.json says; no console errors, no external requests.
// SCREENSHOT=docs/directory.png node --test dist/test/monitor/page.test.js writes the docs' picture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { chromiumSkip, openBrowser } from '../helpers/browser.js';
import { ROOT, startRelayProcess } from '../helpers/relay-process.js';
import { historyFixture } from './history-fixture.js';
import type { DirectoryDocument } from '../../src/monitor/document.js';

const tableRows = (page: Page) => page.$$eval('#relays tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
const pct = (v: number | null) => (v === null ? '-' : (v * 100).toFixed(v === 1 || v === 0 ? 0 : 1) + '%');

test('/directory: figures, views, a sortable filterable table, the detail with uptime bar and RTT chart', { skip: chromiumSkip() }, async () => {
  const fx = await historyFixture();
  const relay = await startRelayProcess({
    dataDir: fx.dataDir,
    env: { ORBWEAVER_INFO_NAME: 'Directory <Test>', ORBWEAVER_SPIDER_MONITOR: '1', ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_MONITOR_TIMEOUT: '3s', ORBWEAVER_SPIDER_VALIDATE_BATCH: '0' },
  });
  const browser = await openBrowser({ width: 1360, height: 1000 });
  const problems: string[] = [];
  try {
    // the monitor's first cycle at start-up: a live check of each of the five relays
    let doc: DirectoryDocument | undefined;
    for (let i = 0; i < 200; i++) {
      doc = (await (await fetch(relay.httpUrl + '/directory.json')).json()) as DirectoryDocument;
      if (doc.monitor.cycles >= 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(doc && doc.monitor.cycles >= 1, 'a monitor cycle finished');
    assert.deepEqual([doc.total, doc.summary.checked, doc.summary.online.now, doc.candidates.total], [5, 5, 3, 3]);
    assert.equal(doc.summary.online.week, 4, 'the dead relay was online until two days ago');

    const page = await browser.context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => { if (!r.url().startsWith(relay.httpUrl)) problems.push(`external request: ${r.url()}`); });
    assert.equal((await page.goto(relay.httpUrl + '/directory', { waitUntil: 'load' }))?.status(), 200);
    await page.waitForSelector('body[data-ready="1"]');
    assert.match(await page.title(), /^Directory <Test> · relay directory$/);
    assert.deepEqual(await Promise.all(['f-total', 'f-checked', 'f-now', 'f-day', 'f-week', 'f-candidates'].map((id) => page.textContent('#' + id))), ['5', '5', '3', '3', '4', '3']);
    const nipRows = await page.$$eval('#by-nip tbody tr', (trs) => trs.map((tr) => [...tr.children].slice(0, 2).map((c) => c.textContent)));
    assert.deepEqual(nipRows.find((r) => r[0] === 'NIP-50'), ['NIP-50', '1']);
    assert.deepEqual(nipRows.find((r) => r[0] === 'NIP-01'), ['NIP-01', '3']);
    const software = await page.textContent('#by-software');
    assert.match(software ?? '', /strfry/);
    assert.match(software ?? '', /khatru/);

    // the table: every relay, what /directory.json says, sortable and filterable
    const cols = await page.$$eval('#relays thead th', (ths) => ths.map((th) => (th.textContent ?? '').replace(/[▲▼]/g, '').trim()));
    const col = (n: string) => { const i = cols.indexOf(n); assert.ok(i >= 0, `column ${n} in ${cols}`); return i; };
    let rows = await tableRows(page);
    assert.equal(rows.length, 5);
    for (const r of doc.rows) {
      const shown = rows.find((x) => x[col('URL')] === r.url);
      assert.ok(shown, r.url);
      assert.equal(shown[col('now')], r.online ? 'online' : 'offline');
      assert.equal(shown[col('uptime 7 d')], pct(r.uptimeWeek), `uptime 7 d of ${r.url}`);
    }
    assert.deepEqual(rows.slice(0, 3).map((r) => r[col('now')]), ['online', 'online', 'online'], 'online relays first');
    await page.click('#relays thead th[data-key="uptimeMonth"]');
    rows = await tableRows(page);
    assert.equal(rows[0][col('URL')], fx.urls.alpha, 'sorted by 30-day uptime, highest first');
    assert.equal(rows.at(-1)![col('URL')], fx.urls.silent);
    await page.click('#relays thead th[data-key="uptimeMonth"]');
    assert.equal((await tableRows(page))[0][col('URL')], fx.urls.silent, 'and the other way round');
    await page.fill('#filter', 'nip-50');
    assert.deepEqual((await tableRows(page)).map((r) => r[col('URL')]), [fx.urls.beta], 'filtered by a supported NIP');
    await page.fill('#filter', 'khatru');
    assert.deepEqual((await tableRows(page)).map((r) => r[col('URL')]), [fx.urls.gamma], 'filtered by software');
    // the probes (docs/monitor.md): Alpha claims NIP-77 and leaves NEG-OPEN unanswered; nobody serves 45/50/77 here
    const serving = await page.$$eval('#serving tbody tr', (trs) => trs.map((tr) => [...tr.children].slice(0, 2).map((c) => c.textContent)));
    assert.deepEqual(serving, [['NIP-50', '0'], ['NIP-45', '0'], ['NIP-77', '0']]);
    assert.equal(await page.textContent('#differing'), '1 relay claims otherwise than the probes saw (filter: differs)');
    await page.fill('#filter', 'differs');
    assert.deepEqual((await tableRows(page)).map((r) => r[col('URL')]), [fx.urls.alpha], 'filtered by a claim the probes contradict');
    await page.click(`#relays tbody tr[data-url="${fx.urls.alpha}"] td:nth-child(2)`);
    await page.waitForSelector('#detail svg.rtt');
    const facts = Object.fromEntries(await page.$$eval('#detail table.facts tr', (trs) => trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent])));
    assert.equal(facts.differences, 'claims NIP-77, no answer');
    assert.equal(facts['NIPs claimed'], '1, 2, 4, 9, 11, 22, 28, 40, 70, 77');
    assert.match(facts.probes ?? '', /NIP-77 silent/);
    // the probe history is a chart: a row per NIP probed, a cell per check, the latest NIP-77 cell silent
    const cells = await page.$$eval('#detail svg.probes rect[data-nip="77"]', (rs) => rs.map((r) => [r.getAttribute('data-outcome'), r.getAttribute('class'), r.querySelector('title')?.textContent ?? '']));
    assert.ok(cells.length >= 1, 'a NIP-77 row in the probe chart');
    assert.equal(cells.at(-1)![0], 'silent');
    assert.equal(cells.at(-1)![1], 'day fair', 'silent is drawn amber');
    assert.match(cells.at(-1)![2], /NIP-77 silent/);
    assert.match(await page.textContent('#detail .chart:has(svg.probes) .legend') ?? '', /NIP-77: .*silent \d+/);
    await page.click('#close-detail');
    await page.waitForSelector('#detail', { state: 'hidden' });
    await page.fill('#filter', '');
    await page.click('#chips button[data-show="offline"]');
    assert.deepEqual((await tableRows(page)).map((r) => r[col('URL')]).sort(), [fx.urls.dead, fx.urls.silent].sort(), 'offline only');
    await page.click('#chips button[data-show=""]');

    // one relay: facts, the uptime bar (30 days) and the RTT chart, all inline SVG
    await page.click(`#relays tbody tr[data-url="${fx.urls.beta}"] td:nth-child(2)`);
    await page.waitForSelector('#detail svg.rtt');
    assert.equal(await page.textContent('#detail h2'), fx.urls.beta);
    assert.equal(await page.locator('#detail svg.uptime rect.day').count(), 30);
    assert.ok(await page.locator('#detail svg.uptime rect.day.poor').count() >= 1, 'the day of its outage');
    assert.ok(await page.locator('#detail svg.uptime rect.day.good').count() >= 25);
    const path = await page.getAttribute('#detail svg.rtt path.line.open', 'd');
    assert.ok((path ?? '').split(/[ML]/).length > 50, 'a line through the checks');
    assert.ok(await page.locator('#detail svg.rtt rect.down').count() >= 5, 'offline checks marked');
    assert.match(await page.textContent('#detail') ?? '', /Events per kind from the crawl/);
    assert.match(page.url(), /#relay=/);
    await page.click('#close-detail');
    await page.waitForSelector('#detail', { state: 'hidden' });

    // the status page links into it: the section heading, and each relay to its detail
    await page.goto(relay.httpUrl + '/', { waitUntil: 'load' });
    await page.waitForSelector('#directory tbody tr');
    await page.click(`#directory tbody a[href="/directory#relay=${encodeURIComponent(fx.urls.gamma)}"]`);
    await page.waitForSelector('#detail svg.uptime');
    assert.equal(await page.textContent('#detail h2'), fx.urls.gamma);
    await page.goto(relay.httpUrl + '/', { waitUntil: 'load' });
    await page.click('#directory-box h2 a[href="/directory"]');
    await page.waitForSelector('body[data-ready="1"]');
    if (process.env.SCREENSHOT) {
      await page.goto(`${relay.httpUrl}/directory#relay=${encodeURIComponent(fx.urls.beta)}`, { waitUntil: 'load' });
      await page.waitForSelector('#detail svg.rtt');
      await page.screenshot({ path: join(ROOT, process.env.SCREENSHOT), fullPage: true });
    }
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await relay.cleanup();
    await fx.close();
    rmSync(fx.dataDir, { recursive: true, force: true });
  }
});
