// NIP-45 over the wire: an index-only COUNT larger than what is left of read.scanBudget is answered
// with an estimate marked "approximate": true (not refused), on the query threads and on the main
// thread alike; a count within the budget stays exact; a count that is not index-only and passes
// the budget is still refused with CLOSED "error:".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client, now } from '../helpers/client.js';
import { rmSync } from 'node:fs';

const ALL = 2400;
const SOME = 600;
const ENV = {
  ORBWEAVER_READ_SCAN_BUDGET: '1500',
  ORBWEAVER_STORE_QUERY_YIELD_EVERY: '100',
  // the events are loaded faster than one client of a public relay may publish
  ORBWEAVER_RATE_LIMITS_PER_IP_EVENT: '0',
  ORBWEAVER_RATE_LIMITS_PER_CONNECTION_EVENT: '0',
  ORBWEAVER_RATE_LIMITS_MESSAGES_PER_IP: '0',
  ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0',
};

test('COUNT past the read budget: index-only counts are estimated and marked approximate (queryThreads 2 and 0)', async () => {
  const dataDir = tempDir();
  try {
    const a = new Author();
    const t0 = now() - ALL - 10;
    // one event a second, all tagged x, the newest SOME also y: evenly spread, so the estimate is close
    const events = Array.from({ length: ALL }, (_, i) => a.sign({ created_at: t0 + i, tags: i >= ALL - SOME ? [['t', 'x'], ['t', 'y']] : [['t', 'x']] }));
    for (const threads of ['2', '0']) {
      const relay = await startRelayProcess({ dataDir, env: { ...ENV, ORBWEAVER_QUERY_THREADS: threads } });
      const c = await Client.open(relay.url);
      try {
        if (threads === '2') {
          for (let i = 0; i < events.length; i += 200) {
            const oks = await Promise.all(events.slice(i, i + 200).map((e) => c.publish(e)));
            assert.ok(oks.every((r) => r.ok), JSON.stringify(oks.find((r) => !r.ok)));
          }
        }
        const within = (await c.count({ '#t': ['y'] }))[2];
        assert.deepEqual(within, { count: SOME }, `exact within the budget (threads ${threads})`);
        for (const f of [{ '#t': ['x'] }, { kinds: [1] }, { kinds: [1], '#t': ['x'] }]) {
          const m = await c.count(f);
          assert.equal(m[0], 'COUNT', `${JSON.stringify(f)} answered, not refused: ${JSON.stringify(m)}`);
          const r = m[2] as { count: number; approximate?: boolean };
          assert.equal(r.approximate, true, `${JSON.stringify(f)} (threads ${threads})`);
          assert.ok(Math.abs(r.count - ALL) <= ALL * 0.02, `estimate ${r.count} of ${ALL} (threads ${threads})`);
        }
        // reading events (authors is checked on each) is no index-only count: past the budget it is refused
        const refused = await c.count({ authors: [a.pk], '#t': ['x'], kinds: [1] });
        assert.equal(refused[0], 'CLOSED');
        assert.match(String(refused[2]), /^error: /);
      } finally {
        c.close();
        await relay.stop();
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
