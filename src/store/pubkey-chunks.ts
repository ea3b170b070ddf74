// 32-byte pubkeys side by side by index, in chunks of 65,536 (2 MiB each): it grows without
// copying what it holds, where one buffer that doubled held up to twice the pubkeys, and both
// copies while it grew. The pubkey id cache keeps its keys here, the import's spool its held
// authors' pubkeys (pubkey-id-cache.ts, graph-spool.ts).

const SHIFT = 16;
const PER_CHUNK = 1 << SHIFT;

export class PubkeyChunks {
  private readonly chunks: Buffer[] = [];

  /** Writes the pubkey (64 hex digits) at index i, at most one past the last index written so far. */
  set(i: number, hex: string): void {
    const c = i >>> SHIFT;
    if (c === this.chunks.length) this.chunks.push(Buffer.allocUnsafeSlow(32 * PER_CHUNK));
    this.chunks[c]!.write(hex, 32 * (i & (PER_CHUNK - 1)), 32, 'hex');
  }

  /** The buffer that holds index i's pubkey, from offset(i). */
  chunk(i: number): Buffer {
    return this.chunks[i >>> SHIFT]!;
  }

  offset(i: number): number {
    return 32 * (i & (PER_CHUNK - 1));
  }
}
