// Which Node lines the relay runs on and how it says so: the uWebSockets.js binary is chosen by
// the running Node's ABI and the glibc it needs (read from the binary itself), the start-up line
// names the package and the binary, and a Node or a C library no build fits is refused with what
// it needs, what the host has and what to do (the JS shim only with allowJsFallback). The loader's
// decisions are checked against the installed packages' real binaries with the host's facts
// varied; `npx orbweaver` is run as docs/commands.md offers it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { chooseUwsBinary, glibcNeeded, loadUws, noBinaryMessage, thisHost, type Host } from '../../src/relay/uws.js';
import { ROOT, startRelayProcess } from '../helpers/relay-process.js';
import { cleanEnv } from '../helpers/cli.js';

const TRUFFLE = '@trufflesuite/uws-js-unofficial';
const BTC = '@btc-vision/uwebsockets.js';
const linux = (abi: string, glibc: string | null): Host => ({ platform: 'linux', arch: 'x64', abi, nodeVersion: `v-abi${abi}`, glibc });

test('the start-up line names the Node, the uWebSockets.js package and its native binary for this ABI', async () => {
  const relay = await startRelayProcess();
  try {
    const line = relay.logs.find((l) => l.msg === 'orbweaver relay listening')!;
    assert.equal(line.node, process.version);
    assert.equal(line.uwsNative, true, 'a native binary, not the JS shim');
    assert.match(String(line.uwsPackage), new RegExp(`^(${TRUFFLE}|${BTC})@\\d+\\.\\d+\\.\\d+`));
    const binary = String(line.uwsBinary);
    assert.ok(existsSync(binary), binary);
    assert.equal(basename(binary), `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    if (process.versions.modules !== '115') assert.match(String(line.uwsPackage), new RegExp(`^${BTC}@`), 'Node 22 and 24 use the btc-vision build');
  } finally {
    await relay.cleanup();
  }
});

test('the glibc a binary needs is read from the binary: 2.27 for the Node 20 build, 2.38 for the Node 22/24 build', () => {
  const truffle = chooseUwsBinary(linux('115', '2.36')).found!;
  assert.match(truffle.package, new RegExp(`^${TRUFFLE}@`), 'Node 20 on glibc 2.36: the trufflesuite build');
  assert.equal(glibcNeeded(truffle.binary), '2.27');
  const btc = chooseUwsBinary(linux('137', '2.41')).found!;
  assert.match(btc.package, new RegExp(`^${BTC}@`), 'Node 24 on glibc 2.41: the btc-vision build');
  assert.equal(glibcNeeded(btc.binary), '2.38');
  assert.match(chooseUwsBinary(linux('127', '2.38')).found!.package, new RegExp(`^${BTC}@`), 'Node 22 on exactly 2.38');
  assert.equal(glibcNeeded(join(ROOT, 'package.json')), null, 'not an ELF file');
});

test('Node 22/24 on a glibc older than 2.38: refused with what it needs, what the host has and what to do', () => {
  for (const abi of ['127', '137']) {
    const choice = chooseUwsBinary(linux(abi, '2.36'));
    assert.equal(choice.found, undefined);
    const msg = noBinaryMessage(linux(abi, '2.36'), choice);
    assert.match(msg, /needs glibc 2\.38; this host has glibc 2\.36/);
    assert.match(msg, /Debian 13/);
    assert.match(msg, /Docker image/);
    assert.match(msg, /Node 20 on this host/);
    assert.match(msg, /allowJsFallback \/ ORBWEAVER_ALLOW_JS_FALLBACK=1/);
  }
  const musl = noBinaryMessage(linux('137', null), chooseUwsBinary(linux('137', null)));
  assert.match(musl, /needs glibc 2\.38; this system has no glibc \(musl\?\)/);
});

test('Node 26 (ABI 147): refused, saying plainly that no build has a binary for it yet; the JS shim only when allowed', () => {
  const host = linux('147', '2.41');
  assert.throws(() => loadUws(false, host), (e: Error) => {
    assert.match(e.message, /no uWebSockets\.js build on the npm registry had a binary for Node 26 \(ABI 147\)/);
    assert.match(e.message, /Node 24 or 22/);
    assert.match(e.message, new RegExp(`${BTC}@[^ ]+ has no binary for linux x64 ABI 147`));
    assert.match(e.message, /ORBWEAVER_ALLOW_JS_FALLBACK=1/);
    return true;
  });
  const shim = loadUws(true, host);
  assert.equal(shim.native, false);
  assert.match(shim.package, /pure-JS shim/);
  assert.equal(typeof shim.uws.App, 'function');
  assert.match(shim.error!, /Node 26/);
});

test('this process loads the binary chosen for it', () => {
  const host = thisHost();
  const loaded = loadUws(false, host);
  assert.equal(loaded.native, true);
  assert.equal(loaded.binary, chooseUwsBinary(host).found!.binary);
  assert.equal(typeof loaded.uws.App, 'function');
});

test('npx orbweaver runs the built CLI without compiling it again', () => {
  const cache = mkdtempSync(join(tmpdir(), 'orbweaver-npx-cache-'));
  const built = join(ROOT, 'dist/src/cli.js');
  const before = statSync(built).mtimeMs;
  try {
    // a fresh npx cache: the first call, as an operator's first `npx orbweaver` is; offline, since
    // npx only links the project into its cache
    const r = spawnSync('npx', ['orbweaver', 'config', '--env'], {
      cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: cleanEnv({ npm_config_cache: cache, npm_config_offline: 'true', npm_config_update_notifier: 'false' }),
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /ORBWEAVER_PORT/);
    assert.equal(statSync(built).mtimeMs, before, 'the prepare script npx runs compiled nothing (dist was current)');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
