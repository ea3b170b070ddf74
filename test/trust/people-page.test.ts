// /directory/people in a real browser (headless Chromium through playwright-core), on a relay that
// ranks a small follow graph from one root: the figures of the last pass, the top pubkeys in rank
// order with their rank and follower bars (inline SVG), claimed names shown as text (never as
// markup), and the lookup form's answer. No console errors, no external requests.
// SCREENSHOT=/tmp/people.png node --test dist/test/trust/people-page.test.js keeps a picture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumSkip, openBrowser } from '../helpers/browser.js';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { waitForRanks } from './helpers.js';

test('/directory/people: figures, the top pubkeys with rank and follower bars, names as text, a lookup', { skip: chromiumSkip() }, async () => {
  const root = new Author();
  const relay = await startRelayProcess({ env: { ORBWEAVER_INFO_NAME: 'People <Test>', ORBWEAVER_TRUST_ROOTS: root.pk, ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0' } });
  const browser = await openBrowser({ width: 1360, height: 900 });
  const problems: string[] = [];
  try {
    const c = await Client.open(relay.url);
    const a = new Author(), b = new Author(), x = new Author();
    assert.equal((await c.publish(b.sign({ kind: 0, content: JSON.stringify({ name: '<img src=x onerror=alert(1)>Bea' }) }))).ok, true);
    for (const e of [root.sign({ kind: 3, tags: [['p', a.pk], ['p', b.pk]] }), a.sign({ kind: 3, tags: [['p', b.pk]] }), b.sign({ kind: 3, tags: [['p', x.pk]] })]) assert.equal((await c.publish(e)).ok, true);
    c.close();
    await waitForRanks(relay, 4);
    const doc = (await (await fetch(`${relay.httpUrl}/directory/people.json`)).json()) as { people: Array<{ pubkey: string; rank: number; followers: number; mutes: number }> };
    assert.equal(doc.people.length, 4);

    const page = await browser.context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); void d.dismiss(); });
    page.on('request', (r) => { if (!r.url().startsWith(relay.httpUrl)) problems.push(`external request: ${r.url()}`); });
    assert.equal((await page.goto(`${relay.httpUrl}/directory/people`, { waitUntil: 'load' }))?.status(), 200);
    assert.equal(await page.title(), 'People <Test> · people');
    assert.deepEqual(await Promise.all(['f-nodes', 'f-edges', 'f-mode'].map((id) => page.textContent('#' + id))), ['4', '4', 'rooted in 1 key']);

    // the rows: what people.json says, in its order; the name is text, not markup
    const rows = await page.$$eval('#people tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    assert.deepEqual(rows.map((r) => r[6]), doc.people.map((p) => p.pubkey));
    assert.deepEqual(rows.map((r) => [Number(r[1]), Number(r[3]), Number(r[5])]), doc.people.map((p) => [p.rank, p.followers, p.mutes]));
    assert.equal(rows[0]![6], root.pk, 'the root first');
    assert.equal(rows.find((r) => r[6] === b.pk)![7], '<img src=x onerror=alert(1)>Bea');
    assert.equal(await page.$$eval('#people img', (imgs) => imgs.length), 0);

    // bars: a rank bar and a followers bar per row; b has the most followers, so a full bar
    const bars = await page.$$eval('#people tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('svg.meter rect.fill')].map((r) => Number(r.getAttribute('width')))));
    assert.ok(bars.every((b2) => b2.length === 2), 'two bars per row');
    bars.forEach((b2, i) => assert.equal(b2[0], Number(doc.people[i]!.rank.toFixed(1)), `rank bar of row ${i + 1}`));
    const bi = doc.people.findIndex((p) => p.pubkey === b.pk);
    assert.equal(bars[bi]![1], 100, 'the most followed fills its bar');
    const box = await page.$eval('#people svg.meter', (s) => { const r = s.getBoundingClientRect(); return [r.width, r.height]; });
    assert.ok(box[0] > 20 && box[1] > 2, `a bar is drawn (${box})`);

    // the lookup form
    await page.fill('form.tools input[name=pubkey]', b.pk);
    await Promise.all([page.waitForURL(/pubkey=/), page.click('form.tools button')]);
    assert.match((await page.textContent('#found')) ?? '', new RegExp(`${b.pk} <img src=x onerror=alert\\(1\\)>Bea: rank \\d+, 2 followers, 0 mutes`));
    await page.fill('form.tools input[name=pubkey]', 'nobody');
    await Promise.all([page.waitForURL(/pubkey=nobody/), page.click('form.tools button')]);
    assert.equal(await page.textContent('#found'), 'nobody: not ranked');
    assert.deepEqual(problems, []);
    if (process.env.SCREENSHOT) {
      await page.goto(`${relay.httpUrl}/directory/people?pubkey=${b.pk}`, { waitUntil: 'load' });
      await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
    }
  } finally {
    await browser.close();
    await relay.cleanup();
  }
});
