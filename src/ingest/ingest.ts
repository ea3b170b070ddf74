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
import type { EventStore, WriteResult } from '../store/types.js';
import type { Ingest, IngestContext, IngestDone, IngestMetrics, IngestResult, OnStored } from './types.js';
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
   * What follows the signature check, as the callback it answers: the write, the OK and the
   * fan-out, each stage answering the next through a callback. When the store's writer parses the
   * JSON itself (a writer thread), `parsed` is null: nothing holds the parsed event while the event
   * is in flight, and it is parsed again for the listeners once stored. Thousands of events in
   * flight kept their tags alive through several scavenges of the main thread's young generation,
   * which then copied and promoted them: half of that thread's time went to GC when publishing
   * follow lists (bench/RESULTS.md). A parse that dies young costs less. For the same reason the
   * stages are callbacks, not an async function and its promises: each of those lived as long as
   * the event was in flight (0.7 KB an event of what the main thread's scavenges copied; RESULTS,
   * twenty-third session). `done` is called once: with an error where the promise of ingest()
   * rejects (a listener that threw), else with the result; it must not throw.
   */
  function afterCheck(id: string | undefined, parsed: NostrEvent | null, json: string, kind: number, ctx: IngestContext, done: IngestDone) {
    return (bad: string | null, members?: string | null): void => {
      let r: IngestResult;
      try {
        if (bad) r = reject(id, bad, 'invalid');
        else if (isEphemeral(kind)) {
          onStored(parsed ?? (JSON.parse(json) as NostrEvent), json);
          r = { ok: true, message: '', status: 'ephemeral', id };
        } else {
          store.writeThen(parsed, json, (err, result) => {
            let w: IngestResult;
            try {
              w = err ? reject(id, `error: could not store the event: ${err.message}`) : stored(id, parsed, json, result!, ctx);
            } catch (e) {
              return done(e);
            }
            done(null, w);
          }, members ?? undefined);
          return;
        }
      } catch (e) {
        return done(e);
      }
      done(null, r);
    };
  }

  /** The answer to a write the store made; a stored event goes to the hooks and listeners first. */
  function stored(id: string | undefined, parsed: NostrEvent | null, json: string, result: WriteResult, ctx: IngestContext): IngestResult {
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

  // Not async: nothing after the signature check may hold `raw` (afterCheck's closure holds the JSON).
  function ingestThen(raw: unknown, ctx: IngestContext, done: IngestDone): void {
    metrics?.eventsReceived.inc({ source: ctx.source });
    const id = typeof (raw as NostrEvent)?.id === 'string' ? (raw as NostrEvent).id : undefined;
    const shape = structureError(raw);
    if (shape) return done(null, reject(id, `invalid: ${shape}`, 'invalid'));
    const event = canonical(raw as NostrEvent);
    const json = JSON.stringify(event);
    const refused = firstRefusal(policies.rejectEvent, { event, json }, ctx);
    if (refused) return done(null, reject(id, refused, refused.startsWith('invalid:') ? 'invalid' : 'rejected'));
    const next = afterCheck(id, store.writesFromJson ? null : event, json, event.kind, ctx, done);
    // Every event is checked here, whoever hands it on, except an object this process checked
    // already and that still has the JSON it had then (the spider checks before it hands on).
    if (verifiedJson(raw) === json) next(null);
    else verifier.checkThen(event, json, next);
  }

  const ingest = (raw: unknown, ctx: IngestContext): Promise<IngestResult> =>
    new Promise((resolve, rejectPromise) => ingestThen(raw, ctx, (err, r) => (err ? rejectPromise(err) : resolve(r!))));
  return Object.assign(ingest, { direct: ingestThen });
}
