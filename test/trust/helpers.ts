// Shared by the trust tests: waiting for a relay process's ranking pass.
import type { RelayProcess } from '../helpers/relay-process.js';
import { sleep } from '../helpers/client.js';

/** The log line of the first ranking pass that saw exactly `edges` follow edges. */
export async function waitForRanks(relay: RelayProcess, edges: number, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = relay.logs.find((l) => l.msg === 'trust: ranks computed' && l.edges === edges);
    if (line) return line;
    if (Date.now() > until) throw new Error(`no ranking pass with ${edges} follow edges: ${JSON.stringify(relay.logs.filter((l) => String(l.msg).startsWith('trust')))}`);
    await sleep(50);
  }
}
