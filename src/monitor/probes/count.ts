// NIP-45 probe: COUNT of the followers of a key no one holds (kind 3, #p: cheap on every relay, and
// the filter NIP-45 gives `hll` for) must be answered with a count; CLOSED is a refusal; `hll`, when
// given, must be 256 one-byte registers in hex.
import type { RelayClient } from '../../remote/client.js';
import { nobody, whole, type Step } from './ask.js';
import type { CountProbe } from './types.js';

export async function probeCount(client: RelayClient, o: Step): Promise<CountProbe> {
  const started = performance.now();
  const a = await client.countAnswer([{ kinds: [3], '#p': [nobody()] }], o.timeout, o.signal);
  if (o.signal.aborted) return { outcome: 'skipped' };
  if (a === null) return client.isOpen ? { outcome: 'silent' } : { outcome: 'skipped' };
  const ms = whole(performance.now() - started);
  if ('closed' in a) return { outcome: 'refused', detail: a.closed, ms };
  if ('invalid' in a) return { outcome: 'wrong', detail: `COUNT ${a.invalid}`, ms };
  const p: CountProbe = { outcome: 'served', ms };
  if (a.hll !== undefined) p.hll = /^[0-9a-f]{512}$/i.test(a.hll);
  return p;
}
