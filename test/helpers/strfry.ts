// strfry, the reference relay, started on a free loopback port with a minimal config (its defaults
// otherwise: negentropy on) — for interop tests (NIP-77, the monitor's probes). The binary is
// ORBWEAVER_STRFRY, else `strfry` on PATH; without one, `strfrySkip` says why.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { tempDir } from './relay-process.js';

/** The strfry binary: ORBWEAVER_STRFRY, else `strfry` on PATH; '' when there is none. */
function findStrfry(): string {
  const named = process.env.ORBWEAVER_STRFRY;
  if (named) return named;
  const onPath = (process.env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'strfry')).find((p) => existsSync(p));
  return onPath ?? '';
}
export const STRFRY = findStrfry();
export const strfrySkip = STRFRY && existsSync(STRFRY) ? false
  : STRFRY ? `no strfry binary at ORBWEAVER_STRFRY=${STRFRY}` : 'no strfry binary: set ORBWEAVER_STRFRY to its path, or put strfry on PATH';

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

export interface Strfry {
  url: string;
  dir: string;
  conf: string;
  proc: ChildProcess;
  /** runs a strfry subcommand against its database (LMDB: fine while the relay runs) */
  cmd(args: string[]): { status: number | null; out: string };
  stop(): Promise<void>;
}

export async function startStrfry(): Promise<Strfry> {
  const dir = tempDir('orbweaver-strfry-');
  mkdirSync(join(dir, 'db'));
  const port = await freePort();
  const conf = join(dir, 'strfry.conf');
  // a minimal config: strfry's defaults for everything else (negentropy on, maxSyncEvents 1000000)
  writeFileSync(conf, `db = "${join(dir, 'db')}/"\nrelay {\n  bind = "127.0.0.1"\n  port = ${port}\n  nofiles = 0\n}\n`);
  const proc = spawn(STRFRY, [`--config=${conf}`, 'relay'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strfry did not start:\n${log}`)), 10_000);
    proc.stderr!.on('data', (d) => {
      log += d;
      if (/Started websocket server/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`strfry exited with ${code}:\n${log}`)));
  });
  proc.stderr!.resume();
  return {
    url: `ws://127.0.0.1:${port}`,
    dir,
    conf,
    proc,
    cmd(args) {
      const r = spawnSync(STRFRY, [`--config=${conf}`, ...args], { encoding: 'utf8', timeout: 60_000 });
      return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

