// Pubkeys to dense integer ids without a JavaScript object per pubkey: the 32-byte keys sit back to
// back in one growing byte array (id * 32), and an open-addressing table of id+1 finds them. At
// 1 M pubkeys this is ~32 MB of keys and ~8 MB of table, whatever the number of edges.
const KEY = 32;

export class PubkeyIds {
  private keys = new Uint8Array(KEY * 1024);
  private slots = new Int32Array(2048);
  private mask = 2047;
  size = 0;
  private readonly scratch = Buffer.allocUnsafe(KEY);

  /** The id of a 64-hex pubkey, added when `add`; -1 when unknown (or not hex). */
  idOfHex(hex: string, add: boolean): number {
    if (this.scratch.write(hex, 0, KEY, 'hex') !== KEY) return -1;
    return this.idOf(this.scratch, add);
  }

  /** The id of a 32-byte pubkey, added when `add`; -1 when unknown. */
  idOf(k: Uint8Array, add: boolean): number {
    // pubkeys are hashes: their bytes are already uniform (a ground collision costs the attacker
    // ~2^32 work per key and only lengthens one probe chain)
    let h = ((k[0]! | (k[1]! << 8) | (k[2]! << 16) | (k[3]! << 24)) ^ (k[12]! | (k[21]! << 8) | (k[30]! << 16))) & this.mask;
    for (;;) {
      const s = this.slots[h]!;
      if (s === 0) break;
      if (this.equals(s - 1, k)) return s - 1;
      h = (h + 1) & this.mask;
    }
    if (!add) return -1;
    const id = this.size++;
    if ((id + 1) * KEY > this.keys.length) {
      const bigger = new Uint8Array(this.keys.length * 2);
      bigger.set(this.keys);
      this.keys = bigger;
    }
    this.keys.set(k.subarray(0, KEY), id * KEY);
    this.slots[h] = id + 1;
    if (this.size * 2 > this.slots.length) this.grow();
    return id;
  }

  /** The 32 bytes of an id (a view: copy before keeping). */
  key(id: number): Uint8Array {
    return this.keys.subarray(id * KEY, id * KEY + KEY);
  }

  hex(id: number): string {
    return Buffer.from(this.keys.buffer, this.keys.byteOffset + id * KEY, KEY).toString('hex');
  }

  private equals(id: number, k: Uint8Array): boolean {
    const o = id * KEY;
    for (let i = 0; i < KEY; i++) if (this.keys[o + i] !== k[i]) return false;
    return true;
  }

  private grow(): void {
    const n = this.slots.length * 2;
    this.slots = new Int32Array(n);
    this.mask = n - 1;
    for (let id = 0; id < this.size; id++) {
      const k = this.key(id);
      let h = ((k[0]! | (k[1]! << 8) | (k[2]! << 16) | (k[3]! << 24)) ^ (k[12]! | (k[21]! << 8) | (k[30]! << 16))) & this.mask;
      while (this.slots[h] !== 0) h = (h + 1) & this.mask;
      this.slots[h] = id + 1;
    }
  }
}
