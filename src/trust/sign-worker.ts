// Worker thread of the NIP-85 signing thread (sign-thread.ts): signs batches of templates.
import { parentPort } from 'node:worker_threads';
import { signEvent } from '../nostr/sign.js';
import type { SignReply, SignRequest } from './sign-messages.js';

parentPort!.on('message', (m: SignRequest) => {
  try {
    parentPort!.postMessage({ id: m.id, events: m.templates.map((t) => signEvent(t, m.key)) } satisfies SignReply);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message } satisfies SignReply);
  }
});
