// Recent refusals for the operator's dashboard: totals by reason since start, and the last few
// with their message (no event content, only the refusal text and the client IP).

export interface Refusal { at: number; verb: string; reason: string; message: string; ip: string }

export class RefusalLog {
  readonly byReason = new Map<string, number>();
  private recent: Refusal[] = [];
  constructor(private keep = 50) {}

  add(verb: string, message: string, ip = ''): void {
    const i = message.indexOf(':');
    const reason = i > 0 ? message.slice(0, i) : 'error';
    this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
    this.recent.push({ at: Date.now(), verb, reason, message: message.slice(0, 200), ip });
    if (this.recent.length > this.keep * 2) this.recent = this.recent.slice(-this.keep);
  }

  snapshot(): { byReason: Record<string, number>; recent: Refusal[] } {
    return { byReason: Object.fromEntries(this.byReason), recent: this.recent.slice(-this.keep).reverse() };
  }
}
