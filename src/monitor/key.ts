// The monitor's signing key: spider.monitorKey (ORBWEAVER_SPIDER_MONITOR_KEY, hex or nsec) when set,
// else one generated on first use and kept in <dataDir>/monitor.key (mode 0600), so the monitor
// keeps its identity across restarts and `spider --once` signs with the same key as the relay on
// that data directory.
import { getPublicKey } from 'nostr-tools/pure';
import { parseSecretKey } from '../nostr/keys.js';
import { dataDirKey } from '../lib/key-file.js';

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
  return dataDirKey(dataDir, MONITOR_KEY_FILE, 'the monitor key');
}
