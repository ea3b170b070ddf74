// A free loopback port for a relay a benchmark starts itself (the port is released before use: a
// benchmark on a quiet machine, not a guarantee).
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => res(p)); });
  });
}
