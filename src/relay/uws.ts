// Loads uWebSockets.js. The official package is not on the npm registry; two registry builds are
// optional dependencies, each with native binaries for some Node ABIs (process.versions.modules)
// and a glibc it needs:
//   @trufflesuite/uws-js-unofficial 20.30  Node 16/18/20 (ABI 93/108/115)       glibc 2.27
//   @btc-vision/uwebsockets.js 20.57       Node 20/22/24/25 (ABI 115/127/137/141) glibc 2.38
// We pick the binary ourselves (first build that has this platform + ABI and whose glibc need the
// host meets), so the choice is logged and a mismatch is explained instead of silently falling
// back to the trufflesuite package's slow pure-JS shim, which is used only when the operator
// allows it (allowJsFallback).
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

export type Uws = typeof UWS;

interface Build {
  pkg: string;
  /** the binary's path inside the package */
  binary: (platform: string, arch: string, abi: string) => string;
}

/** in order of preference: on Node 20 the older build, which needs only glibc 2.27 */
export const UWS_BUILDS: readonly Build[] = [
  { pkg: '@trufflesuite/uws-js-unofficial', binary: (p, a, abi) => `binaries/uws_${p}_${a}_${abi}.node` },
  { pkg: '@btc-vision/uwebsockets.js', binary: (p, a, abi) => `uws_${p}_${a}_${abi}.node` },
];
/** the package whose pure-JS shim (dist/index.js) runs anywhere, slowly */
const FALLBACK_PKG = '@trufflesuite/uws-js-unofficial';

const NODE_OF_ABI: Record<string, string> = { '93': '16', '108': '18', '115': '20', '127': '22', '131': '23', '137': '24', '141': '25', '147': '26' };
/** what to tell an operator whose Node or libc no build covers (docs/install.md, "Runtimes") */
const SUPPORTED = 'Node 24 or 22 (glibc >= 2.38: Debian 13, Ubuntu 24.04 or later, or the Docker image), or Node 20 (glibc >= 2.27, end of life)';

export interface LoadedUws {
  uws: Uws;
  /** false: the pure-JS shim (allowJsFallback) */
  native: boolean;
  /** the package that provided it, with its version */
  package: string;
  /** the native binary's path (or the shim's entry) */
  binary: string;
  /** why no native binary could be used, when none could */
  error?: string;
  /** the build drops a large frame's payload when it writes it directly and the kernel takes less than its header (ws-send.ts works around it) */
  largeFrameBug: boolean;
}

/** facts of the running process; tests pass others to check each decision */
export interface Host {
  platform: string;
  arch: string;
  abi: string;
  nodeVersion: string;
  /** the C library's glibc version, or null when it is not glibc (musl) or not Linux */
  glibc: string | null;
}

export function thisHost(): Host {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return { platform: process.platform, arch: process.arch, abi: process.versions.modules, nodeVersion: process.version, glibc: header?.glibcVersionRuntime ?? null };
}

/** `2.38` < `2.4`? No: compared as numbers per part */
function versionBelow(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
}

/**
 * The newest GLIBC_x.y symbol version an ELF shared object needs (its .gnu.version_r section), or
 * null when it needs none or is not a 64-bit little-endian ELF file. Read from the binary itself,
 * so a new build's need is never a stale table entry.
 */
export function glibcNeeded(file: string): string | null {
  const fd = openSync(file, 'r');
  try {
    const read = (pos: number, len: number): Buffer => {
      const b = Buffer.alloc(len);
      readSync(fd, b, 0, len, pos);
      return b;
    };
    const eh = read(0, 64);
    if (eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || eh[5] !== 1) return null; // ELF, 64-bit, little-endian
    const shoff = Number(eh.readBigUInt64LE(0x28));
    const shentsize = eh.readUInt16LE(0x3a);
    const shnum = eh.readUInt16LE(0x3c);
    const sh = read(shoff, shentsize * shnum);
    const section = (i: number) => ({
      type: sh.readUInt32LE(i * shentsize + 4),
      offset: Number(sh.readBigUInt64LE(i * shentsize + 24)),
      size: Number(sh.readBigUInt64LE(i * shentsize + 32)),
      link: sh.readUInt32LE(i * shentsize + 40),
      info: sh.readUInt32LE(i * shentsize + 44),
    });
    const SHT_GNU_VERNEED = 0x6ffffffe;
    let best: string | null = null;
    for (let i = 0; i < shnum; i++) {
      const s = section(i);
      if (s.type !== SHT_GNU_VERNEED) continue;
      const strs = section(s.link);
      const strtab = read(strs.offset, strs.size);
      const name = (off: number) => strtab.toString('latin1', off, strtab.indexOf(0, off));
      const need = read(s.offset, s.size);
      // Elf64_Verneed {u16 version, u16 cnt, u32 file, u32 aux, u32 next}, Elf64_Vernaux {u32 hash, u16 flags, u16 other, u32 name, u32 next}
      for (let n = 0, at = 0; n < s.info; n++) {
        const cnt = need.readUInt16LE(at + 2);
        for (let k = 0, aux = at + need.readUInt32LE(at + 8); k < cnt; k++) {
          const m = /^GLIBC_(\d+(?:\.\d+)+)$/.exec(name(need.readUInt32LE(aux + 8)));
          if (m && (best === null || versionBelow(best, m[1]))) best = m[1];
          aux += need.readUInt32LE(aux + 12);
        }
        const next = need.readUInt32LE(at + 12);
        if (next === 0) break;
        at += next;
      }
    }
    return best;
  } finally {
    closeSync(fd);
  }
}

function packageDir(pkg: string): string | null {
  // not require.resolve(`${pkg}/package.json`): a package whose `exports` omit it cannot be resolved so
  for (const dir of require.resolve.paths(pkg) ?? []) if (existsSync(join(dir, pkg, 'package.json'))) return join(dir, pkg);
  return null; // an optional dependency that is not installed
}

function version(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

export interface Choice {
  /** the binary to load, when one fits */
  found?: { package: string; binary: string };
  /** why each build was passed over, for the error */
  skipped: string[];
  /** a build has this ABI's binary but needs a newer glibc than the host's */
  glibcShort?: { package: string; needs: string };
}

/** which installed build's binary fits this host; no loading */
export function chooseUwsBinary(host: Host): Choice {
  const skipped: string[] = [];
  let glibcShort: Choice['glibcShort'];
  for (const build of UWS_BUILDS) {
    const dir = packageDir(build.pkg);
    if (!dir) {
      skipped.push(`${build.pkg} is not installed`);
      continue;
    }
    const name = `${build.pkg}@${version(dir)}`;
    const binary = join(dir, build.binary(host.platform, host.arch, host.abi));
    if (!existsSync(binary)) {
      skipped.push(`${name} has no binary for ${host.platform} ${host.arch} ABI ${host.abi}`);
      continue;
    }
    if (host.platform === 'linux') {
      const needs = glibcNeeded(binary);
      if (needs && (host.glibc === null || versionBelow(host.glibc, needs))) {
        skipped.push(`${name} needs glibc ${needs}; this host has ${host.glibc === null ? 'no glibc (musl?)' : `glibc ${host.glibc}`}`);
        glibcShort ??= { package: name, needs };
        continue;
      }
    }
    return { found: { package: name, binary }, skipped };
  }
  return { skipped, glibcShort };
}

/** the operator's error: what was tried, why it does not fit, what to do */
export function noBinaryMessage(host: Host, choice: Choice, loadError?: string): string {
  const node = `Node ${host.nodeVersion} (ABI ${host.abi}${NODE_OF_ABI[host.abi] ? '' : ', unknown line'}) on ${host.platform} ${host.arch}`;
  let what: string;
  if (loadError) what = `the native uWebSockets.js binary did not load on ${node}: ${loadError}`;
  else if (choice.glibcShort) {
    const has = host.glibc === null ? 'this system has no glibc (musl?)' : `this host has glibc ${host.glibc}`;
    what = `the uWebSockets.js binary for ${node} is in ${choice.glibcShort.package}, which needs glibc ${choice.glibcShort.needs}; ${has}. Use a system with glibc >= ${choice.glibcShort.needs} (Debian 13 has 2.41, Ubuntu 24.04 has 2.39) or the Docker image${host.abi !== '115' && host.glibc !== null ? ', or Node 20 on this host (its build needs glibc 2.27; Node 20 is past its end of life)' : ''}`;
  } else if (host.abi === '147') what = `no uWebSockets.js build on the npm registry had a binary for Node 26 (ABI 147) when this release was made (the README and docs/install.md say which lines run). Use ${SUPPORTED}`;
  else what = `no installed uWebSockets.js build has a binary for ${node}. Use ${SUPPORTED}`;
  return `${what} [${choice.skipped.join('; ')}]. To run anyway on the slow pure-JS shim, set allowJsFallback / ORBWEAVER_ALLOW_JS_FALLBACK=1.`;
}

export function loadUws(allowJsFallback: boolean, host: Host = thisHost()): LoadedUws {
  const choice = chooseUwsBinary(host);
  let loadError: string | undefined;
  if (choice.found) {
    try {
      return { uws: require(choice.found.binary) as Uws, native: true, ...choice.found, largeFrameBug: choice.found.package.startsWith(`${FALLBACK_PKG}@`) };
    } catch (e) {
      loadError = `${choice.found.binary}: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  const error = noBinaryMessage(host, choice, loadError);
  if (!allowJsFallback) throw new Error(error);
  const dir = packageDir(FALLBACK_PKG);
  if (!dir) throw new Error(`${error} (but the shim's package ${FALLBACK_PKG} is not installed either: run npm ci)`);
  const shim = join(dir, 'dist/index.js');
  return { uws: require(shim) as Uws, native: false, package: `${FALLBACK_PKG}@${version(dir)} (pure-JS shim)`, binary: shim, error, largeFrameBug: false };
}
