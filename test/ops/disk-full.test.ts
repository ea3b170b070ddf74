// A full disk, the way it happens to an operator: the relay's data directory on a small file system
// (a 64 MiB tmpfs, mounted for the test: needs root, else skipped) that clients fill with 2 KB notes.
// Before store.minFreeBytes, the store's write map (used until 2026-11-29) turned ENOSPC into SIGBUS
// and the relay died; without it a full disk fails each commit.
// Now: writes are refused with an `error:` that says why, the relay stays up and keeps answering
// reads, /metrics and /status.json say so, writes resume by themselves once space is freed, and
// every event acknowledged with OK true is there after a restart (no false OK).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ROOT, startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

/** Mounts a tmpfs of `mib` MiB at a new directory; null (with the reason) where this process may not mount. */
function smallFileSystem(mib: number): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'mounting a small file system needs root';
  const dir = tempDir('orbweaver-diskfull-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed here: ${(e as Error).message.split('\n')[0]}`;
  }
  return {
    dir,
    unmount() {
      try { execFileSync('umount', [dir], { stdio: 'pipe' }); } catch { /* already gone */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const fs = smallFileSystem(64);

test('a full disk: writes refused with error:, reads go on, writes resume when space is freed, nothing acknowledged lost', { skip: typeof fs === 'string' ? fs : false }, async () => {
  const { dir, unmount } = fs as { dir: string; unmount(): void };
  const dataDir = join(dir, 'data');
  const filler = join(dir, 'filler');
  mkdirSync(dataDir);
  try {
    // room for ~16 MiB of events before the 8 MiB reserve
    writeFileSync(filler, Buffer.alloc(36 * 1024 * 1024, 1));
    const env = { ORBWEAVER_STORE_MIN_FREE_BYTES: String(8 * 1024 * 1024), ORBWEAVER_STORE_MAP_SIZE: String(1024 ** 3) };
    const relay = await startRelayProcess({ dataDir, env });
    const acked: NostrEvent[] = [];
    let refusal = '';
    try {
      const c = await Client.open(relay.url);
      const authors = Array.from({ length: 4 }, () => new Author());
      const body = 'x'.repeat(2000);
      for (let round = 0; !refusal && round < 400; round++) {
        const batch = Array.from({ length: 50 }, (_, i) => authors[i % 4]!.sign({ kind: 1, content: `${round}.${i} ${body}` }));
        for (const ev of batch) c.send(['EVENT', ev]);
        for (const ev of batch) {
          const m = await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 15_000);
          if (m[2] === true) acked.push(ev);
          else refusal ||= String(m[3]);
        }
      }
      assert.ok(acked.length > 1000, `${acked.length} events stored before the disk filled`);
      assert.match(refusal, /^error: could not store the event: the relay's disk is full \([\d.]+ MiB free on the file system of .*, less than store\.minFreeBytes 8\.0 MiB\); writes resume when space is freed$/);
      assert.equal(relay.proc.exitCode, null, 'the relay is still running');

      // refused while full, said on /metrics and /status.json; reads go on
      const more = await c.publish(authors[0]!.sign({ kind: 1, content: 'while full' }));
      assert.equal(more.ok, false);
      assert.match(more.message, /^error: could not store the event: the relay's disk is full/);
      const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
      assert.match(metrics, /^orbweaver_store_disk_full 1$/m);
      const status = (await (await fetch(`${relay.httpUrl}/status.json`)).json()) as { relay: { disk: { full: boolean; minFreeBytes: number } } };
      assert.equal(status.relay.disk.full, true);
      assert.equal(status.relay.disk.minFreeBytes, 8 * 1024 * 1024);
      const read = await c.query([{ ids: acked.slice(0, 20).map((e) => e.id) }]);
      assert.equal(read.events.length, 20, 'reads are answered while writes are refused');

      // space comes back: writes resume without a restart
      rmSync(filler);
      const after = authors[1]!.sign({ kind: 1, content: 'after space was freed' });
      assert.deepEqual(await c.publish(after), { ok: true, message: '' });
      acked.push(after);
      assert.match(await (await fetch(`${relay.httpUrl}/metrics`)).text(), /^orbweaver_store_disk_full 0$/m);
      c.close();
    } finally {
      await relay.stop();
    }

    const again = await startRelayProcess({ dataDir, env });
    try {
      const c = await Client.open(again.url);
      let found = 0;
      for (let i = 0; i < acked.length; i += 50) found += (await c.query([{ ids: acked.slice(i, i + 50).map((e) => e.id) }])).events.length;
      assert.equal(found, acked.length, 'every event acknowledged with OK true is stored');
      c.close();
    } finally {
      await again.stop();
    }
  } finally {
    unmount();
  }
});

// Below store.minFreeBytes the relay refuses writes before they commit. A commit that fails anyway
// (a full disk here, with the reserve off; an I/O error; LMDB's free-list check) must fail its
// writes and nothing else: lmdb-js rejected a promise of its own that nobody handled, and Node
// ended the process (src/store/commit-failures.ts).
const tiny = smallFileSystem(8);

test('a commit that fails (a full disk, no reserve) refuses its writes; the process goes on and keeps what it acknowledged', { skip: typeof tiny === 'string' ? tiny : false }, () => {
  const { dir, unmount } = tiny as { dir: string; unmount(): void };
  try {
    const script = join(dir, 'fill.mjs');
    writeFileSync(script, `
      import { openStore } from ${JSON.stringify(join(ROOT, 'dist/src/store/index.js'))};
      import { finalizeEvent, generateSecretKey } from ${JSON.stringify(join(ROOT, 'node_modules/nostr-tools/lib/esm/pure.js'))};
      const store = await openStore({ dir: ${JSON.stringify(join(dir, 'data'))}, mapSize: 2 ** 30, minFreeBytes: 0 });
      const sk = generateSecretKey();
      let ok = 0, failed = 0, message = '';
      for (let i = 0; i < 600 && failed < 20; i++) {
        const ev = finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000), tags: [], content: 'x'.repeat(30000) + i }, sk);
        try { await store.write(ev, JSON.stringify(ev)); ok++; } catch (e) { failed++; message = e.message; }
      }
      const counted = await store.count([{ kinds: [1] }]);
      console.log(JSON.stringify({ ok, failed, message, counted }));
      await store.close().catch(() => {});
    `);
    const r = spawnSync(process.execPath, [script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `the process ended: ${r.stderr.slice(-2000)}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { ok: number; failed: number; message: string; counted: number };
    assert.ok(out.ok > 0 && out.failed > 0, JSON.stringify(out));
    assert.match(out.message, /^commit failed: \S/, 'the refused writes say why');
    assert.doesNotMatch(out.message, /see commitError/, 'in LMDB\'s words, not lmdb-js\'s pointer to them');
    assert.equal(out.counted, out.ok, 'every acknowledged write is in the store');
  } finally {
    unmount();
  }
});
