// NIP-42 for one relay: when each connection's challenge goes out (on connect, or on demand right
// before the first `auth-required:` refusal, so the client holds one when it reads the refusal),
// and the answer to an AUTH (checked against the challenge, our URLs and the clock; at most
// MAX_AUTHED_PER_CONNECTION pubkeys per connection). Access (access.ts) hands it the rate limit and
// the in-flight budget an AUTH meets before its signature is checked.
import type { Config } from '../../config.js';
import { challengeMode } from '../../config/policy.js';
import { authMessage, okMessage } from '../../nostr/messages.js';
import { checkAuthEvent, type SigChecker } from '../auth/nip42.js';
import type { OwnUrls } from '../auth/own-urls.js';
import type { Release } from './budgets.js';

/** What the gate needs of a connection (src/relay/connection.ts). */
export interface AuthConn {
  ip: string;
  challenge: string;
  /** whether `challenge` was sent on this connection (NIP-42: only a sent challenge can be answered) */
  challengeSent: boolean;
  authed: Set<string>;
  send(text: string): boolean;
}

/**
 * Pubkeys one connection may authenticate: each is checked on every rate-limited message, and the
 * set lives as long as the connection.
 */
export const MAX_AUTHED_PER_CONNECTION = 16;

/** Before an AUTH is checked: a `rate-limited:` refusal, else the release of its in-flight slot. */
export type AuthAdmission = (conn: AuthConn) => Release | string;

const hasChallengeTag = (raw: unknown): boolean => {
  const tags = (raw as { tags?: unknown })?.tags;
  return Array.isArray(tags) && tags.some((t) => Array.isArray(t) && t[0] === 'challenge');
};

export class AuthGate {
  ok = 0;
  failed = 0;
  /** challenges sent (on connect, or on demand) */
  challengesSent = 0;
  /** when the challenge is sent (auth.challenge with `auto` resolved) */
  readonly mode: 'connect' | 'on-demand';

  constructor(
    private readonly auth: Config['auth'],
    private readonly verifier: SigChecker,
    private readonly ownUrls: OwnUrls,
    /** notes a refusal for the status page (verb, message, ip) */
    private readonly refused: (verb: string, message: string, ip: string) => void,
  ) {
    this.mode = challengeMode(auth);
  }

  /** A new connection: in `connect` mode its challenge goes out at once. */
  opened(conn: AuthConn): void {
    if (this.mode === 'connect') this.sendChallenge(conn);
  }

  /** Sends the connection's challenge, once (`again`: once more, the same challenge). */
  sendChallenge(conn: AuthConn, again = false): void {
    if (conn.challengeSent && !again) return;
    conn.challengeSent = true;
    this.challengesSent++;
    conn.send(authMessage(conn.challenge));
  }

  /**
   * Call right before sending a refusal (OK false, CLOSED, NEG-ERR): when it says `auth-required:`
   * and the connection has no challenge yet (on-demand mode), the challenge goes out first.
   */
  beforeRefusal(conn: AuthConn, message: string): void {
    if (!conn.challengeSent && message.startsWith('auth-required:')) this.sendChallenge(conn);
  }

  /**
   * An AUTH message. Each costs a signature check, so `admit` (the rate limit and the connection's
   * messages in flight) is met before anything is verified.
   */
  async handle(conn: AuthConn, raw: unknown, admit: AuthAdmission): Promise<void> {
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? (raw as { id: string }).id : '';
    const release = admit(conn);
    if (typeof release === 'string') {
      this.failed++;
      conn.send(okMessage(id, false, release));
      return;
    }
    if (!conn.challengeSent || !hasChallengeTag(raw)) {
      // A client that wants to authenticate before anything needs it (a spider worker, the local
      // key of `spider --once` and `sync`) asks for the challenge by sending AUTH first, without a
      // challenge tag. Nothing can be granted without a challenge, so the answer is the challenge
      // (the same one again if it was sent already), then this refusal; no signature is checked.
      release();
      const why = conn.challengeSent
        ? 'auth-required: an AUTH event needs the challenge tag; answer the challenge just sent'
        : 'auth-required: no challenge was sent on this connection yet; answer the one just sent';
      this.sendChallenge(conn, true);
      conn.send(okMessage(id, false, why));
      return;
    }
    let r: Awaited<ReturnType<typeof checkAuthEvent>>;
    try {
      r = await checkAuthEvent(raw, {
        challenge: conn.challenge,
        relayUrls: this.ownUrls.relayUrls(),
        maxAgeSeconds: Math.round(this.auth.maxAge / 1000),
      }, this.verifier);
    } finally {
      release();
    }
    if ('error' in r) {
      this.failed++;
      this.refused('AUTH', r.error, conn.ip);
      conn.send(okMessage(id, false, r.error));
      return;
    }
    if (!conn.authed.has(r.pubkey) && conn.authed.size >= MAX_AUTHED_PER_CONNECTION) {
      this.failed++;
      conn.send(okMessage(id, false, `restricted: at most ${MAX_AUTHED_PER_CONNECTION} pubkeys may authenticate on one connection`));
      return;
    }
    this.ok++;
    conn.authed.add(r.pubkey);
    conn.send(okMessage(id, true, ''));
  }
}
