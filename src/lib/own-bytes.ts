// A postMessage clones the whole ArrayBuffer under a typed array, not just the view: a small
// Buffer.from() lives in Node's shared 8 KB pool, so sending one copies the pool with it.

/** The array itself when it spans its whole buffer, else a copy of just its bytes. */
export const ownBytes = (a: Uint8Array): Uint8Array => (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : new Uint8Array(a));
