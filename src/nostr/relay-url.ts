// The one spelling of a relay URL (NIP-65 lists, config, the directory's keys). Pure: whether the
// address behind it may be dialled is remote/url.ts's question, after DNS.

export const MAX_URL_LENGTH = 256;

/** Canonical spelling of a relay URL, or null when it is not an acceptable ws/wss URL. */
export function normalizeRelayUrl(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  if (s.length === 0 || s.length > MAX_URL_LENGTH) return null;
  if (!/^wss?:\/\//i.test(s)) return null;
  let u: URL;
  try { u = new URL(s); } catch { return null; }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') return null;
  if (u.username || u.password) return null;
  const host = u.hostname; // lower-cased, IDN in punycode, IPv6 in brackets
  if (!host || host.includes('%')) return null;
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)$/.test(host)) return null;
  if (host.startsWith('.') || host.includes('..')) return null;
  const stripped = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!stripped) return null;
  // URL already drops the default port (80 for ws, 443 for wss).
  const port = u.port ? `:${u.port}` : '';
  let path = u.pathname.replace(/\/+$/, '');
  if (path === '/') path = '';
  const out = `${u.protocol}//${stripped}${port}${path}`;
  return out.length > MAX_URL_LENGTH ? null : out;
}
