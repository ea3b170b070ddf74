// One client message in: parse it and hand it to the handler for its verb. Bad input gets a
// NOTICE (or CLOSED when a subscription id could be read) and the connection keeps working.
// (Messages over limits.maxMessageLength are refused before they are decoded: server.ts.)
import { closedMessage, MessageError, negErrMessage, noticeMessage, parseClientMessage, RECORD_VERB } from '../../nostr/messages.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { handleEvent } from './event.js';
import { handleReq } from './req.js';
import { handleCount } from './count.js';
import { closeSubscription } from './close.js';
import { handleNegClose, handleNegMsg, handleNegOpen } from './neg.js';
import { handleRecord } from './record.js';

export function dispatch(h: RelayContext, conn: Connection, text: string): void {
  let msg;
  try {
    msg = parseClientMessage(text, h.config.limits.maxSubIdLength);
  } catch (e) {
    if (!(e instanceof MessageError)) throw e;
    h.metrics.refusals.inc({ reason: 'invalid' });
    h.access.refused('MESSAGE', e.message, conn.ip);
    conn.send(e.subId ? (e.negentropy ? negErrMessage(e.subId, e.message) : closedMessage(e.subId, e.message)) : noticeMessage(e.message));
    return;
  }
  // the verb, not the message: this closure lives until the handler's promise settles, and an
  // EVENT's parsed event must not live that long (ingest.ts, settle)
  const verb = msg.type;
  const fail = (e: unknown) => h.logger.error({ err: e, verb }, 'handler failed');
  switch (msg.type) {
    case 'EVENT':
      handleEvent(h, conn, msg.event); // logs its own failures: no promise per event in flight
      return;
    case 'REQ':
      handleReq(h, conn, msg.subId, msg.filters).catch(fail);
      return;
    case 'COUNT':
      handleCount(h, conn, msg.subId, msg.filters).catch(fail);
      return;
    case 'CLOSE':
      closeSubscription(h, conn, msg.subId);
      return;
    case 'AUTH':
      h.access.handleAuth(conn, msg.event).catch(fail);
      return;
    case 'NEG-OPEN':
      handleNegOpen(h, conn, msg.subId, msg.filter, msg.message).catch(fail);
      return;
    case 'NEG-MSG':
      handleNegMsg(h, conn, msg.subId, msg.message).catch(fail);
      return;
    case 'NEG-CLOSE':
      handleNegClose(h, conn, msg.subId);
      return;
    case RECORD_VERB:
      handleRecord(h, conn, msg.reqId, msg.op, msg.args).catch(fail);
      return;
  }
}
