// This process's memory figures from /proc/self/status (Linux).
import { readFileSync } from 'node:fs';

/** A `kB` line of /proc/self/status (RssAnon, RssFile, ...), in bytes; null where unknown (not Linux). */
export function procStatusBytes(field: 'RssAnon' | 'RssFile'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
