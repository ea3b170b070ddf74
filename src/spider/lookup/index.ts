// Lookup on a miss's public surface (wired by src/app/app.ts into the relay's REQ handler).
export { createLookup, type Lookup, type LookupDeps, type LookupStatus } from './lookup.js';
