// Starts the real relay as a user would (node dist/src/cli.js relay) on a free loopback port with
// a temporary data directory, and waits for its "listening" log line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopWithin } from './stop-within.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = join(ROOT, 'dist/src/cli.js');

export interface RelayProcess {
  url: string;
  httpUrl: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** log lines (parsed JSON) seen so far */
  logs: Array<Record<string, unknown>>;
  /** SIGTERM and wait for exit; returns the exit code */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit */
  kill(): Promise<void>;
  /** stop (if running) and delete the data directory */
  cleanup(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  port?: number;
  timeoutMs?: number;
}

export function tempDir(prefix = 'orbweaver-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startRelayProcess(opts: StartOptions = {}): Promise<RelayProcess> {
  const dataDir = opts.dataDir ?? tempDir();
  const args = [CLI, 'relay', '--host', '127.0.0.1', '--port', String(opts.port ?? 0), '--data', dataDir, ...(opts.args ?? [])];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    // The HTTP request budget and the page snapshots are off unless a test asks for them
    // (test/hostile/http-flood.test.ts runs the defaults): tests poll /status.json and /metrics
    // faster than a public client should, and read figures right after what changed them.
    env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'info', ORBWEAVER_RATE_LIMITS_HTTP_REQUESTS_PER_IP: '0', ORBWEAVER_LIMITS_PAGE_SNAPSHOT: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // a relay that did not come up is killed, so it cannot keep the test process alive
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`relay did not start within ${opts.timeoutMs ?? 20000} ms:\n${stderr}`)); }, opts.timeoutMs ?? 20000);
    let buf = '';
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const o = JSON.parse(line);
          logs.push(o);
          if (o.msg === 'orbweaver relay listening') {
            clearTimeout(timer);
            resolve(Number(String(o.address).split(':').pop()));
          }
        } catch { /* not JSON */ }
      }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`relay exited with ${code} before listening:\n${stderr}`)); });
  });
  let done = false;
  exited.then(() => { done = true; });
  const rp: RelayProcess = {
    url: `ws://127.0.0.1:${port}`,
    httpUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    proc,
    logs,
    async stop() {
      if (done) return proc.exitCode;
      return stopWithin(proc, exited, 'SIGTERM', 'the relay', () => stderr);
    },
    async kill() {
      if (done) return;
      proc.kill('SIGKILL');
      await exited;
    },
    async cleanup() {
      await rp.kill();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return rp;
}

/**
 * Starts several relays at once. When one fails to start, the others are stopped before the error
 * is thrown, so no relay is left running to keep the test file alive.
 */
export async function startRelayProcesses(...opts: StartOptions[]): Promise<RelayProcess[]> {
  const settled = await Promise.allSettled(opts.map((o) => startRelayProcess(o)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return settled.map((r) => (r as PromiseFulfilledResult<RelayProcess>).value);
  await Promise.all(settled.map((r) => (r.status === 'fulfilled' ? r.value.cleanup() : undefined)));
  throw failed.reason;
}
