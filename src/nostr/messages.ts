// NIP-01 client messages in, relay messages out (and NIP-77's NEG-*). Pure: no I/O.
// Relay messages are built as strings so a stored event's JSON is spliced in without re-serializing.

export type ClientMessage =
  | { type: 'EVENT'; event: unknown }
  | { type: 'REQ'; subId: string; filters: unknown[] }
  | { type: 'COUNT'; subId: string; filters: unknown[] }
  | { type: 'CLOSE'; subId: string }
  | { type: 'AUTH'; event: unknown }
  | { type: 'NEG-OPEN'; subId: string; filter: unknown; message: string }
  | { type: 'NEG-MSG'; subId: string; message: string }
  | { type: 'NEG-CLOSE'; subId: string }
  | { type: typeof RECORD_VERB; reqId: string; op: string; args: unknown[] };

/**
 * Not a NIP: a record write sent by a command beside the relay that owns the data directory
 * (`["ORBWEAVER-RECORD", <request id>, <operation>, [<arguments>]]`, src/app/record-ops.ts),
 * answered `["ORBWEAVER-RECORD", <request id>, true, <result>]` or `[…, false, "<prefix>: why"]`.
 */
export const RECORD_VERB = 'ORBWEAVER-RECORD';
const MAX_REQ_ID = 64;

/** Thrown for input that is not a well-formed client message; the text goes into a NOTICE. */
export class MessageError extends Error {
  /** The subscription id, when one could be read, so the refusal can be a CLOSED. */
  constructor(message: string, readonly subId?: string, readonly negentropy = false) { super(message); }
}

export function parseClientMessage(text: string, maxSubIdLength: number): ClientMessage {
  let msg: unknown;
  try { msg = JSON.parse(text); } catch { throw new MessageError('invalid: message is not JSON'); }
  if (!Array.isArray(msg) || msg.length === 0 || typeof msg[0] !== 'string') {
    throw new MessageError('invalid: message must be a JSON array starting with a verb');
  }
  const verb = msg[0];
  switch (verb) {
    case 'EVENT':
    case 'AUTH':
      if (msg.length !== 2) throw new MessageError(`invalid: ${verb} takes exactly one event`);
      return { type: verb, event: msg[1] };
    case 'REQ':
    case 'COUNT': {
      const subId = readSubId(msg[1], verb, maxSubIdLength);
      return { type: verb, subId, filters: msg.slice(2) };
    }
    case 'CLOSE':
      if (msg.length !== 2) throw new MessageError('invalid: CLOSE takes exactly one subscription id');
      return { type: 'CLOSE', subId: readSubId(msg[1], verb, maxSubIdLength) };
    case 'NEG-OPEN':
    case 'NEG-MSG':
    case 'NEG-CLOSE': {
      // NIP-77: refusals of a readable subscription id go back as NEG-ERR
      const subId = readSubId(msg[1], verb, maxSubIdLength);
      const arity = verb === 'NEG-OPEN' ? 4 : verb === 'NEG-MSG' ? 3 : 2;
      if (msg.length !== arity) throw new MessageError(`invalid: ${verb} takes ${arity - 1} elements`, subId, true);
      const hex = msg[arity - 1];
      if (verb !== 'NEG-CLOSE' && typeof hex !== 'string') throw new MessageError(`invalid: ${verb} needs a hex-encoded negentropy message`, subId, true);
      if (verb === 'NEG-OPEN') return { type: verb, subId, filter: msg[2], message: hex as string };
      if (verb === 'NEG-MSG') return { type: verb, subId, message: hex as string };
      return { type: verb, subId };
    }
    case RECORD_VERB: {
      if (msg.length !== 4 || typeof msg[1] !== 'string' || msg[1].length === 0 || msg[1].length > MAX_REQ_ID || typeof msg[2] !== 'string' || !Array.isArray(msg[3])) {
        throw new MessageError(`invalid: ${RECORD_VERB} takes a request id (1 to ${MAX_REQ_ID} characters), an operation and an array of arguments`);
      }
      return { type: RECORD_VERB, reqId: msg[1], op: msg[2], args: msg[3] };
    }
    default:
      throw new MessageError(`invalid: unknown message type ${JSON.stringify(verb.slice(0, 32))}`);
  }
}

/**
 * A subscription id that is too long is still answered under that id (CLOSED for REQ/COUNT, NEG-ERR
 * for NIP-77), so a client waiting on it gets an answer; a CLOSE of one gets a NOTICE (nothing was
 * open under it). The id echoed back is no longer than the message that carried it.
 */
function readSubId(v: unknown, verb: string, max: number): string {
  if (typeof v !== 'string' || v.length === 0) throw new MessageError(`invalid: ${verb} needs a non-empty subscription id`);
  if (v.length > max) {
    const answerable = verb !== 'CLOSE';
    throw new MessageError(`invalid: subscription id longer than ${max} characters`, answerable ? v : undefined, verb.startsWith('NEG-'));
  }
  return v;
}

const q = JSON.stringify;

export const okMessage = (id: string, ok: boolean, message: string): string => `["OK",${q(id)},${ok},${q(message)}]`;
/** `eventJson` must be the event's JSON text (as stored). */
export const eventMessage = (subId: string, eventJson: string): string => `["EVENT",${q(subId)},${eventJson}]`;
const CLOSE_ARRAY = new Uint8Array([0x5d]); // ]
/** The UTF-8 bytes around an event's JSON in eventMessage(subId, json), to build that message from bytes. */
export const eventFraming = (subId: string): { prefix: Uint8Array; suffix: Uint8Array } => ({ prefix: Buffer.from(`["EVENT",${q(subId)},`), suffix: CLOSE_ARRAY });
/**
 * EOSE; `finish` (NIP-67): every stored event matching the subscription's filters was sent, so a
 * client need not page further (clients that do not know NIP-67 ignore the third element).
 */
/** EOSE, with NIP-67's hint when one is known: `finish` (every stored match was sent) or `more` (the relay's own limit left some out). */
export const eoseMessage = (subId: string, hint: 'finish' | 'more' | false = false): string => (hint ? `["EOSE",${q(subId)},["${hint}"]]` : `["EOSE",${q(subId)}]`);
export const closedMessage = (subId: string, message: string): string => `["CLOSED",${q(subId)},${q(message)}]`;
export const noticeMessage = (message: string): string => `["NOTICE",${q(message)}]`;
/** NIP-45 answer; `hll` is the hex of the 256 HyperLogLog registers, when the relay has them. */
export const countMessage = (subId: string, count: number, approximate = false, hll?: string): string =>
  `["COUNT",${q(subId)},${q({ count, ...(approximate ? { approximate } : {}), ...(hll ? { hll } : {}) })}]`;
/** The answer to a record write: its result, or the refusal. */
export const recordMessage = (reqId: string, ok: boolean, payload: unknown): string => `[${q(RECORD_VERB)},${q(reqId)},${ok},${q(payload ?? null)}]`;
export const authMessage = (challenge: string): string => `["AUTH",${q(challenge)}]`;
/** NIP-77 */
export const negMsgMessage = (subId: string, hex: string): string => `["NEG-MSG",${q(subId)},"${hex}"]`;
/** NIP-77; `max`: the largest number of records the relay reconciles, after a too-big refusal (strfry's 4th element) */
export const negErrMessage = (subId: string, reason: string, max?: number): string =>
  max === undefined ? `["NEG-ERR",${q(subId)},${q(reason)}]` : `["NEG-ERR",${q(subId)},${q(reason)},${max}]`;

/** The standard machine-readable prefixes (NIP-01). */
export type RefusalPrefix = 'invalid' | 'duplicate' | 'blocked' | 'rate-limited' | 'error' | 'restricted' | 'auth-required' | 'pow' | 'unsupported';
export const refusal = (prefix: RefusalPrefix, text: string): string => `${prefix}: ${text}`;

const EVENT_VERB = '"EVENT"';

/**
 * Whether a raw message is an EVENT, from its first bytes and without decoding it: `[`, then the
 * verb (JSON whitespace allowed around both). Messages past maxMessageLength are judged so before
 * anything reads them (an EVENT may carry a large list).
 */
export function isEventMessage(message: ArrayBuffer | Uint8Array): boolean {
  const b = message instanceof Uint8Array ? message : new Uint8Array(message);
  let i = 0;
  const ws = () => { while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++; };
  ws();
  if (b[i++] !== 0x5b) return false; // [
  ws();
  for (let k = 0; k < EVENT_VERB.length; k++) if (b[i + k] !== EVENT_VERB.charCodeAt(k)) return false;
  return true;
}
