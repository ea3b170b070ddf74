// Live mode's public surface (wired by src/app/app.ts beside the spider).
export { createLive, type Live, type LiveDeps, type LiveRelayStatus, type LiveStatus } from './live.js';
export type { RemoteStatus } from './remote.js';
export type { PubkeyWeight } from './select.js';
