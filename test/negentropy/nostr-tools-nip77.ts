// nostr-tools ships a port of the reference JS negentropy (initiator side) as lib/esm/nip77.js but
// does not list it in its package exports; the tests load the file directly as an independent
// implementation of protocol v1 to compare against.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface NtStorageVector {
  insert(timestamp: number, idHex: string): void;
  seal(): void;
  fingerprint(begin: number, end: number): Uint8Array;
}
export interface NtNegentropyInstance {
  initiate(): string;
  reconcile(msgHex: string, onhave?: (id: string) => void, onneed?: (id: string) => void): string | null;
}

const main = createRequire(import.meta.url).resolve('nostr-tools');
// main is .../nostr-tools/lib/cjs/index.js (or esm): the esm build sits beside it
const esm = join(dirname(dirname(main)), 'esm', 'nip77.js');
const mod = (await import(pathToFileURL(esm).href)) as {
  Negentropy: new (storage: NtStorageVector, frameSizeLimit?: number) => NtNegentropyInstance;
  NegentropyStorageVector: new () => NtStorageVector;
};

export const NtNegentropy = mod.Negentropy;
export const NtStorage = mod.NegentropyStorageVector;
