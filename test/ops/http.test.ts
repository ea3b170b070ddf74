// HTTP on the relay port as other programs read it: the NIP-11 document as the NIP defines its
// fields, HEAD answered like GET (uptime checkers), and the logs in both formats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { rmSync } from 'node:fs';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { spawnCli } from '../helpers/cli.js';

const NPUB = 'npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6';
const HEX = '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d';

async function nip11(url: string): Promise<Record<string, unknown>> {
  const r = await fetch(url, { headers: { Accept: 'application/nostr+json' } });
  assert.equal(r.status, 200);
  return (await r.json()) as Record<string, unknown>;
}

test('NIP-11: pubkey as hex even when configured as npub, software a URL, no lower limit unless one is set', async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_INFO_PUBKEY: NPUB } });
  try {
    const doc = await nip11(relay.httpUrl + '/');
    assert.equal(doc.pubkey, HEX);
    assert.match(String(doc.software), /^https?:\/\/\S+$/, 'software is the URL of the relay software');
    assert.equal(typeof doc.version, 'string');
    const lim = doc.limitation as Record<string, unknown>;
    assert.equal('created_at_lower_limit' in lim, false, 'no lower limit configured: the field is left out');
    assert.equal(lim.created_at_upper_limit, 900);
  } finally {
    await relay.cleanup();
  }
  const limited = await startRelayProcess({ env: { ORBWEAVER_LIMITS_CREATED_AT_PAST_SECONDS: '31536000' } });
  try {
    const doc = await nip11(limited.httpUrl + '/');
    assert.equal((doc.limitation as Record<string, unknown>).created_at_lower_limit, 31536000);
    assert.equal('pubkey' in doc, false, 'no pubkey configured: left out');
  } finally {
    await limited.cleanup();
  }
});

function request(method: string, url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('HEAD /healthz (and the other pages) answers like GET, without a body', async () => {
  const relay = await startRelayProcess();
  try {
    for (const path of ['/healthz', '/', '/metrics', '/status.json']) {
      const get = await request('GET', relay.httpUrl + path);
      const head = await request('HEAD', relay.httpUrl + path);
      assert.equal(get.status, 200, path);
      assert.equal(head.status, 200, `HEAD ${path}`);
      assert.equal(head.headers['content-type'], get.headers['content-type'], `HEAD ${path}: same type`);
      assert.equal(head.body, '', `HEAD ${path}: no body`);
    }
    assert.equal((await request('HEAD', relay.httpUrl + '/nope')).status, 404);
  } finally {
    await relay.cleanup();
  }
});

test('logs: JSON lines by default, readable lines with logFormat pretty (times in UTC)', async () => {
  const relay = await startRelayProcess();
  const line = relay.logs.find((l) => l.msg === 'orbweaver relay listening');
  assert.ok(line && typeof line.time === 'number', 'JSON by default when stderr is not a terminal');
  await relay.cleanup();

  const dir = tempDir();
  const pretty = spawnCli(['relay', '--port', '0', '--data', dir], { env: { ORBWEAVER_LOG_FORMAT: 'pretty' } });
  try {
    const deadline = Date.now() + 20_000;
    while (!/orbweaver relay listening/.test(pretty.stderr()) && Date.now() < deadline && pretty.proc.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    assert.match(pretty.stderr(), /^\d\d:\d\d:\d\d\.\d{3}Z INFO +orbweaver relay listening .*address=ws:\/\/127\.0\.0\.1:\d+ /m);
    assert.equal(pretty.logs.length, 0, 'no JSON');
    assert.equal(await pretty.kill('SIGTERM'), 0);
  } finally {
    await pretty.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
