// A throwaway LMDB environment in the temporary directory, for state that must stay out of memory
// in a process without a store (a worker's known authors). Removed on close.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { FREE_LIST_OPTIONS } from '../../store/env.js';

export interface ScratchEnv {
  env: RootDatabase;
  close(): Promise<void>;
}

export async function scratchEnv(prefix: string): Promise<ScratchEnv> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // No durability needed: it is deleted on close, and rebuilt by the next process. The store's
  // free-list options: its writes are keys alone, the pattern in which lmdb-js's save of a kept
  // free list went wrong (store/env.ts).
  const env = open({ path: dir, noSubdir: false, maxDbs: 4, mapSize: 4 * 1024 ** 3, noSync: true, ...FREE_LIST_OPTIONS } as Parameters<typeof open>[0]);
  return {
    env,
    async close() {
      await env.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
