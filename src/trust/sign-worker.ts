// Worker thread of the NIP-85 signing thread (sign-thread.ts): signs batches of templates.
// Messages: in { id, key, templates }, out { id, events } or { id, error }.
import { parentPort } from 'node:worker_threads';
import { signEvent, type EventTemplate } from '../nostr/sign.js';

parentPort!.on('message', (m: { id: number; key: Uint8Array; templates: EventTemplate[] }) => {
  try {
    parentPort!.postMessage({ id: m.id, events: m.templates.map((t) => signEvent(t, m.key)) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});
