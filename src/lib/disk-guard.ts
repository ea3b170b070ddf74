// Refusing writes before the disk is full, instead of dying when it is.
//
// Until 2026-11-29 the store wrote through LMDB's write map (docs/storage.md, "The write map, and
// why it went"): a transaction's new pages went into the file's mapping, and where the file had no
// blocks yet the file system allocated them when the page was first written. On a full file system
// that allocation failed inside a memory write, and the kernel answered with SIGBUS: the relay died
// with 5,962 events acknowledged and no word to anyone (nothing acknowledged was lost). Now a full
// disk fails the commit's write (ENOSPC) and the whole batch with it; refusing first still says why,
// and keeps the reserve for what a transaction may need.
//
// So every write transaction of the batched writer first asks the file system how much is free
// (statfs, a few µs) and refuses its batch when less than `store.minFreeBytes` is: each event gets
// OK false with an `error:` that says why, reads go on, and writes resume by themselves once space
// is back (the next batch asks again). The reserve has to cover what one transaction can add:
// MAX_BATCH_ENTRIES bounds its dirty pages (250 MiB at worst, a few MiB usually).
import { statfsSync } from 'node:fs';

export interface DiskState {
  /** bytes free to this process on the data directory's file system (null: unknown) */
  freeBytes: number | null;
  /** the reserve below which writes are refused (0: never) */
  minFreeBytes: number;
  /** less than the reserve is free now: writes are refused */
  full: boolean;
  /** batches refused since start */
  refusedBatches: number;
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

export class DiskGuard {
  private refused = 0;

  constructor(
    private readonly dir: string,
    private readonly minFreeBytes: number,
  ) {}

  /** Bytes available to unprivileged writers now, or null when the file system does not say. */
  private measure(): number | null {
    try {
      const s = statfsSync(this.dir);
      return s.bavail * s.bsize;
    } catch {
      return null;
    }
  }

  private tooLittle(free: number | null): boolean {
    return this.minFreeBytes > 0 && free !== null && free < this.minFreeBytes;
  }

  /** Why a write must not start now (an `error:` reason for its events), or null when it may. */
  refusal(): string | null {
    if (this.minFreeBytes <= 0) return null;
    const free = this.measure();
    if (!this.tooLittle(free)) return null;
    this.refused++;
    return `the relay's disk is full (${mib(free!)} free on the file system of ${this.dir}, less than store.minFreeBytes ${mib(this.minFreeBytes)}); writes resume when space is freed`;
  }

  /** Measured now (for /metrics and the status page). */
  state(): DiskState {
    const free = this.measure();
    return { freeBytes: free, minFreeBytes: this.minFreeBytes, full: this.tooLittle(free), refusedBatches: this.refused };
  }
}
