// The monitor's signing key: spider.monitorKey (ORBWEAVER_SPIDER_MONITOR_KEY, hex or nsec) when set,
// else one generated on first use and kept in <dataDir>/monitor.key (64 hex characters, mode 0600),
// so the monitor keeps its identity across restarts and `spider --once` signs with the same key as
// the relay on that data directory. Written to a private temporary file and hard-linked into place
// (fails if the file exists): two processes starting at once both use the one complete file that won.
import { chmodSync, existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { parseSecretKey } from '../nostr/keys.js';

export const MONITOR_KEY_FILE = 'monitor.key';

export interface MonitorKey {
  secretKey: Uint8Array;
  pubkey: string;
  /** where it came from: the configuration, the data directory's file, or generated now into it */
  source: 'config' | 'file' | 'generated';
  file?: string;
}

export function monitorKey(configured: string, dataDir: string): MonitorKey {
  if (configured) {
    const sk = parseSecretKey(configured, 'spider.monitorKey');
    return { secretKey: sk, pubkey: getPublicKey(sk), source: 'config' };
  }
  const file = join(dataDir, MONITOR_KEY_FILE);
  let source: MonitorKey['source'] = 'file';
  const tmp = `${file}.${process.pid}.tmp`;
  if (!existsSync(file)) try {
    writeFileSync(tmp, Buffer.from(generateSecretKey()).toString('hex') + '\n', { flag: 'w', mode: 0o600 });
    linkSync(tmp, file);
    source = 'generated';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create the monitor key ${file}: ${(e as Error).message}`);
  } finally {
    try { unlinkSync(tmp); } catch { /* not created */ }
  }
  // a key readable by others is no secret: tighten it (we own the data directory)
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const sk = parseSecretKey(readFileSync(file, 'utf8'), file);
  return { secretKey: sk, pubkey: getPublicKey(sk), source, file };
}
