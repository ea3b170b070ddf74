// NIP-77 probe: NEG-OPEN over a small filter (the events of a key no one holds) with our empty set's
// first message, made by the project's negentropy code, must be answered with NEG-MSG (a message the
// protocol code can read); NEG-ERR is a refusal. The session is closed at once.
import type { RelayClient } from '../../remote/client.js';
import { Negentropy, NegentropyStorage, NegentropyError } from '../../nostr/negentropy.js';
import { bytesToHex, hexToBytes } from '../../nostr/negentropy-storage.js';
import { nobody, whole, type Step } from './ask.js';
import type { NipProbe } from './types.js';

export function probeNegentropy(client: RelayClient, o: Step): Promise<NipProbe> {
  const neg = new Negentropy(NegentropyStorage.fromItems([]), 0);
  const first = bytesToHex(neg.initiate());
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
    let id = '';
    const finish = (p: NipProbe, close: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      if (close) client.negClose(id, o.tidy === true || p.outcome !== 'served');
      resolve(p);
    };
    const onAbort = () => finish({ outcome: 'skipped' }, true);
    const timer = setTimeout(() => finish({ outcome: 'silent' }, true), o.timeout);
    o.signal.addEventListener('abort', onAbort, { once: true });
    id = client.negOpen({ authors: [nobody()] }, first, {
      msg(hex) {
        const ms = whole(performance.now() - started);
        try {
          neg.reconcileAsInitiator(hexToBytes(hex));
          finish({ outcome: 'served', ms }, true);
        } catch (e) {
          finish({ outcome: 'wrong', detail: `NEG-MSG: ${e instanceof NegentropyError ? e.message : 'not hex'}`.slice(0, 200), ms }, true);
        }
      },
      err(reason) { finish({ outcome: 'refused', detail: `NEG-ERR ${reason}`.slice(0, 200), ms: whole(performance.now() - started) }, false); },
      closed() { finish({ outcome: 'skipped' }, false); },
    });
    if (o.signal.aborted) onAbort();
  });
}
