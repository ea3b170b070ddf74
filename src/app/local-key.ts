// The data directory's local key (<dataDir>/local.key, mode 0600). The relay that owns the data
// directory trusts its pubkey like one of spider.workerPubkeys; the local commands that deliver to
// that relay (`spider --once`, `sync`) authenticate with it (NIP-42). Without it they would be one
// more loopback client under the public per-IP limits (rateLimits.messagesPerIp, bytesPerIp), and a
// crawl delivered at full speed would be dropped and retried. Whoever can read the file can write
// the LMDB files beside it anyway, so it grants nothing the file system does not.
import { dataDirKey, readDataDirKey, type FileKey } from '../lib/key-file.js';

export const LOCAL_KEY_FILE = 'local.key';

/** The relay's side: the key, created on first start. */
export const localKey = (dataDir: string): FileKey => dataDirKey(dataDir, LOCAL_KEY_FILE, 'the local key');

/** A command's side: the key if the relay created it and this user may read it, else null. */
export const readLocalKey = (dataDir: string): Uint8Array | null => readDataDirKey(dataDir, LOCAL_KEY_FILE);
