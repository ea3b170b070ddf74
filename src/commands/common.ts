// What the data commands share: opening the store the relay uses, and small output helpers.
import type { Config } from '../config.js';
import { openStore } from '../store/index.js';
import type { EventStore } from '../store/types.js';
import { commandLogger } from '../lib/logger.js';
import { checkDataDir } from '../app/data-dir.js';
import { unknownOption } from '../config/suggest.js';
import { storeMapOptions } from '../config/relay.js';
import { storeSearchOptions } from '../config/search.js';
import { UsageError } from './args.js';

export { takeFlag, takeOption, UsageError } from './args.js';

/**
 * The store of an existing data directory, for reading (stats, export, directory): a wrong path is
 * an error naming it, never a new empty store. Reads only: the relay may be running on it. The
 * search options are the relay's (storeSearchOptions), so a search filter ranks as the relay's does.
 */
export async function openCommandStore(config: Config): Promise<EventStore> {
  checkDataDir(config.dataDir, 'existing');
  return openStore({ ...storeMapOptions(config), search: storeSearchOptions(config), logger: commandLogger(config), readOnly: true });
}

export const fmt = (n: number): string => n.toLocaleString('en-US');

/** Throws a UsageError for the first argument left over after a command took its options. */
export function rejectUnknown(rest: string[], known: string[], command: string): void {
  if (rest.length) throw new UsageError(unknownOption(rest[0], known, command));
}

/** Writes to a stream, waiting for 'drain' when its buffer is full (constant memory). */
export function writeAll(stream: NodeJS.WritableStream, text: string): Promise<void> | null {
  if (stream.write(text)) return null;
  return new Promise((resolve, reject) => {
    const done = () => { stream.off('error', fail); resolve(); };
    const fail = (e: Error) => { stream.off('drain', done); reject(e); };
    stream.once('drain', done);
    stream.once('error', fail);
  });
}
