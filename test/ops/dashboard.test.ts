// The operator's dashboard in a real browser: headless Chromium from Debian driven by
// playwright-core. It loads, shows the relay's figures, updates them by itself as events arrive,
// lists refusals by reason, and logs no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

const CHROMIUM = '/usr/bin/chromium';

test('the dashboard loads in Chromium, refreshes live figures by itself, and logs no console errors', { skip: existsSync(CHROMIUM) || process.env.CI ? false : 'chromium is not installed (apt-get install chromium; .ci/run does it, and under CI the test runs and fails without it)' }, async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_INFO_NAME: 'Dash <Test> Relay' } });
  const profile = tempDir('orbweaver-chromium-');
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60_000,
  });
  const problems: string[] = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    const resp = await page.goto(relay.httpUrl + '/', { waitUntil: 'load', timeout: 30_000 });
    assert.equal(resp?.status(), 200);
    assert.equal(await page.textContent('#name'), 'Dash <Test> Relay', 'name shown as text, not HTML');
    assert.equal(await page.textContent('#fig-events'), '0');
    for (const h of ['Relay', 'Access', 'Refusals by reason']) assert.ok(await page.isVisible(`h2:text-is("${h}")`), h);

    // activity: 5 stored events, one refusal, an open connection
    const c = await Client.open(relay.url);
    const a = new Author();
    for (let i = 0; i < 5; i++) assert.equal((await c.publish(a.sign({ content: `dash ${i}` }))).ok, true);
    const bad = a.sign({ content: 'future', created_at: Math.floor(Date.now() / 1000) + 86400 });
    assert.equal((await c.publish(bad)).ok, false);

    // the page picks it up by itself (it polls /status.json); bounded wait
    await page.waitForFunction("document.getElementById('fig-events')?.textContent === '5'", undefined, { timeout: 20_000 });
    await page.waitForFunction("document.getElementById('fig-connections')?.textContent === '1'", undefined, { timeout: 20_000 });
    const refusals = await page.textContent('main');
    assert.match(refusals ?? '', /invalid/);
    assert.match(refusals ?? '', /created_at is more than/);
    const updated = await page.getAttribute('body', 'data-updated');
    assert.ok(Number(updated) > 0);
    c.close();
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    await relay.cleanup();
  }
});
