// The one ingest path: validate -> policy -> verify -> store -> OK -> fan-out. The policies are
// cheap (sizes, lists, kinds, PoW) and run first, so an event that will be refused costs no
// signature check; none of them trusts the event before it is verified: a forged event they let
// through is still refused by the check that follows. A client's EVENT,
// an event the spider fetched and an imported line all come through here, so every rule holds
// for all of them and an event that was not stored is never broadcast.
import { canonical, structureError, type NostrEvent } from '../nostr/event.js';
import { isEphemeral } from '../nostr/kinds.js';
import { verifiedJson } from '../nostr/verify.js';
import type { AsyncVerifier } from './verify-pool.js';
import type { EventStore } from '../store/types.js';
import type { Ingest, IngestContext, IngestMetrics, IngestResult, OnStored } from './types.js';
import { firstRefusal, type Policies } from './hooks.js';

export interface IngestDeps {
  store: EventStore;
  verifier: AsyncVerifier;
  policies: Policies;
  /** fan-out to live subscriptions */
  onStored: OnStored;
  metrics?: IngestMetrics;
}

const reasonOf = (message: string) => message.slice(0, Math.max(0, message.indexOf(':'))) || 'error';

export function createIngest(deps: IngestDeps): Ingest {
  const { store, verifier, policies, onStored, metrics } = deps;
  const reject = (id: string | undefined, message: string, status: IngestResult['status'] = 'rejected'): IngestResult => {
    metrics?.eventsRejected.inc({ reason: status === 'rejected' || status === 'invalid' ? reasonOf(message) : status });
    return { ok: false, message, status, id };
  };

  /**
   * The part of the path that waits (signature check, write). When the store's writer parses the
   * JSON itself (a writer thread), `parsed` is null: nothing holds the parsed event while the
   * event is in flight, and it is parsed again for the listeners once stored. Thousands of events
   * in flight kept their tags alive through several scavenges of the main thread's young
   * generation, which then copied and promoted them: half of that thread's time went to GC when
   * publishing follow lists (bench/RESULTS.md). A parse that dies young costs less.
   */
  async function settle(id: string | undefined, parsed: NostrEvent | null, json: string, kind: number, verdict: Promise<string | null> | null, ctx: IngestContext): Promise<IngestResult> {
    const bad = verdict && (await verdict);
    if (bad) return reject(id, bad, 'invalid');

    if (isEphemeral(kind)) {
      onStored(parsed ?? (JSON.parse(json) as NostrEvent), json);
      return { ok: true, message: '', status: 'ephemeral', id };
    }
    let result;
    try {
      result = await store.write(parsed, json);
    } catch (e) {
      return reject(id, `error: could not store the event: ${(e as Error).message}`);
    }
    if (result.status !== 'stored') {
      if (result.ok) {
        metrics?.eventsRejected.inc({ reason: result.status });
        return { ok: true, message: result.message, status: result.status === 'duplicate' ? 'duplicate' : 'rejected', id };
      }
      return reject(id, result.message, result.status === 'replaced' || result.status === 'deleted' ? result.status : 'rejected');
    }
    metrics?.eventsStored.inc({ source: ctx.source });
    const event = parsed ?? (JSON.parse(json) as NostrEvent);
    const info = { event, json };
    for (const hook of policies.onSaved) hook(info, ctx);
    onStored(event, json, result.serial);
    return { ok: true, message: '', status: 'stored', id };
  }

  // Not async: what follows the first await (settle) must not hold `raw`, and an async function
  // keeps its parameters until it returns.
  return function ingest(raw, ctx) {
    metrics?.eventsReceived.inc({ source: ctx.source });
    const id = typeof (raw as NostrEvent)?.id === 'string' ? (raw as NostrEvent).id : undefined;
    const shape = structureError(raw);
    if (shape) return Promise.resolve(reject(id, `invalid: ${shape}`, 'invalid'));
    const event = canonical(raw as NostrEvent);
    const json = JSON.stringify(event);
    const refused = firstRefusal(policies.rejectEvent, { event, json }, ctx);
    if (refused) return Promise.resolve(reject(id, refused, refused.startsWith('invalid:') ? 'invalid' : 'rejected'));
    // Every event is checked here, whoever hands it on, except an object this process checked
    // already and that still has the JSON it had then (the spider checks before it hands on).
    const verdict = verifiedJson(raw) === json ? null : verifier.check(event, json);
    return settle(id, store.writesFromJson ? null : event, json, event.kind, verdict, ctx);
  };
}
