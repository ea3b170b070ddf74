// Room for the next piece of a REQ's stored answer (read.answerPieceBytes), charged before it is
// read: the connection must have drained to where one more piece fits under its cap
// (limits.maxBufferedBytes), and the piece's bytes are reserved against its address's cap
// (limits.maxBufferedBytesPerIp) until they are queued, where the output budget counts them as
// unsent. So an answer of any size reaches a client that reads, at its pace, and what the answers
// of one address hold stays under its cap (and a piece for each REQ being read). Pieces of the
// REQs of one connection are not read one at a time: a client that sends many REQs at once has
// them answered side by side (the query threads' share), each piece past the connection's cap
// let through while it drains (Connection.sendAnswer), the address's cap bounding them all.
//
// An address whose other connections hold its whole cap unsent and do not read would keep a
// reading connection of the same address waiting for ever: past ADDRESS_WAIT_MS the piece is read
// anyway (the smallest piece), and queuing it passes the address cap, which closes the address's
// largest holder as a slow reader (output-budget.ts) — the one not reading.
import type { Connection } from '../connection.js';
import { sleep } from '../../lib/sleep.js';

/** the smallest piece read (the setting's lower bound): below it a piece waits for room */
export const MIN_PIECE = 64 * 1024;
const ADDRESS_WAIT_MS = 2000;
const ADDRESS_POLL_MS = 100;

export interface PieceRoom {
  /** bytes the piece may read (QueryOptions.maxBytes) */
  bytes: number;
  /** gives the reservation back: once the piece is queued, or dropped */
  release(): void;
}

/** Waits for room for a piece of at most `piece` bytes; null when the REQ ended (closed, replaced, the connection gone) first. */
export async function pieceRoom(conn: Connection, ended: { aborted: boolean }, piece: number): Promise<PieceRoom | null> {
  if (!(await conn.drained(Math.max(0, conn.outputCap - piece))) || ended.aborted) return null;
  let room = conn.addressRoom();
  for (const end = Date.now() + ADDRESS_WAIT_MS; room < MIN_PIECE && Date.now() < end; room = conn.addressRoom()) {
    await sleep(ADDRESS_POLL_MS);
    if (ended.aborted || conn.closed) return null;
  }
  const bytes = Math.max(MIN_PIECE, Math.min(piece, room));
  return { bytes, release: conn.reserveOutput(bytes) };
}
