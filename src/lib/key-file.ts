// A secret key kept in a file of the data directory (64 hex characters, mode 0600), generated on
// first use. Written to a private temporary file and hard-linked into place (fails if the file
// exists): two processes starting at once both use the one complete file that won.
import { chmodSync, existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { parseSecretKey } from '../nostr/keys.js';

export interface FileKey {
  secretKey: Uint8Array;
  pubkey: string;
  /** whether it was read from the file or generated into it now */
  source: 'file' | 'generated';
  file: string;
}

/** The key in `<dataDir>/<name>`, generated there when absent; `what` names it in errors. */
export function dataDirKey(dataDir: string, name: string, what: string): FileKey {
  const file = join(dataDir, name);
  let source: FileKey['source'] = 'file';
  const tmp = `${file}.${process.pid}.tmp`;
  if (!existsSync(file)) try {
    writeFileSync(tmp, Buffer.from(generateSecretKey()).toString('hex') + '\n', { flag: 'w', mode: 0o600 });
    linkSync(tmp, file);
    source = 'generated';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create ${what} ${file}: ${(e as Error).message}`);
  } finally {
    try { unlinkSync(tmp); } catch { /* not created */ }
  }
  // a key readable by others is no secret: tighten it (we own the data directory)
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const sk = parseSecretKey(readFileSync(file, 'utf8'), file);
  return { secretKey: sk, pubkey: getPublicKey(sk), source, file };
}

/** The key in `<dataDir>/<name>` if it exists and this user may read it, else null (never creates it). */
export function readDataDirKey(dataDir: string, name: string): Uint8Array | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, name), 'utf8');
  } catch {
    return null;
  }
  try {
    return parseSecretKey(text, join(dataDir, name));
  } catch {
    return null;
  }
}
