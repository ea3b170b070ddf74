// The container health check (Dockerfile HEALTHCHECK): `node dist/src/app/healthcheck.js` exits 0
// when the relay answers /healthz, 1 otherwise. It asks the relay that owns the configured data
// directory at the address that relay recorded (owner.ts), so a port changed in a mounted
// relay.config.json, an ORBWEAVER_* variable or a flag is followed; without a record it tries the
// configured host:port.
import { loadConfig } from '../config.js';
import { liveOwner, reachableUrl } from './owner.js';

export async function healthy(timeoutMs = 4000): Promise<boolean> {
  const config = loadConfig();
  const base = liveOwner(config.dataDir)?.httpUrl ?? reachableUrl(config.host, config.port).replace(/^ws/, 'http');
  try {
    const r = await fetch(`${base}/healthz`, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs) });
    return r.ok;
  } catch {
    return false;
  }
}

healthy().then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => { process.stderr.write(`healthcheck: ${(e as Error).message}\n`); process.exit(1); },
);
