// URLs in comparable form for the auth checks (NIP-42 relay tag, NIP-98 u tag): lowercase scheme
// and host, default port dropped, no trailing slash, no fragment. Unparseable input is returned
// trimmed and lowercased.
export function comparableUrl(u: string, keepQuery: boolean): string {
  const t = u.trim();
  try {
    const url = new URL(t);
    const defaultPort = url.protocol === 'wss:' || url.protocol === 'https:' ? '443' : '80';
    const port = url.port && url.port !== defaultPort ? `:${url.port}` : '';
    return `${url.protocol}//${url.hostname.toLowerCase()}${port}${url.pathname.replace(/\/+$/, '')}${keepQuery ? url.search : ''}`;
  } catch {
    return t.toLowerCase().replace(/\/+$/, '');
  }
}
