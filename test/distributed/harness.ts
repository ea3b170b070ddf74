// Real processes for the distributed spider's tests: redis-server on a free loopback port with no
// persistence (so a restart loses everything, as the tests intend), and `orbweaver worker`
// processes started as an operator would start them.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { CLI, ROOT } from '../helpers/relay-process.js';
import { stopWithin } from '../helpers/stop-within.js';

const run = promisify(execFile);
export const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';
export const REDIS_CLI = process.env.REDIS_CLI ?? 'redis-cli';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL and wait for the exit */
  kill(): Promise<void>;
  /** start again on the same port (empty: no persistence) */
  start(): Promise<void>;
  /** redis-cli against it; stdout trimmed */
  cli(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const cli = async (...args: string[]) => (await run(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout.trim();
  const start = async () => {
    proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const p = proc;
    exited = new Promise((r) => p.once('exit', () => r()));
    const end = Date.now() + 10_000;
    for (;;) {
      try { if ((await cli('PING')) === 'PONG') return; } catch { /* not yet */ }
      if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await start();
  const kill = async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) { proc.kill('SIGKILL'); await exited; }
    proc = null;
  };
  return { port, url: `redis://127.0.0.1:${port}/0`, kill, start, cli, stop: kill };
}

export interface WorkerProcess {
  proc: ChildProcess;
  name: string;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
  exited: Promise<number | null>;
}

/** `node dist/src/cli.js worker --redis ... --relay ...` with env settings. */
export function startWorker(name: string, redisUrl: string, relayUrl: string, env: Record<string, string> = {}): WorkerProcess {
  const proc = spawn(process.execPath, [CLI, 'worker', '--redis', redisUrl, '--relay', relayUrl, '--name', name], {
    cwd: ROOT,
    env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let err = '';
  let buf = '';
  const onData = (d: Buffer) => {
    const t = d.toString();
    err += t;
    buf += t;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try { logs.push(JSON.parse(line)); } catch { /* not JSON */ }
    }
  };
  proc.stderr!.on('data', onData);
  proc.stdout!.on('data', onData);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return {
    proc, name, logs, exited,
    stderr: () => err,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      await stopWithin(proc, exited, signal, `worker ${name}`, () => err);
    },
  };
}

/** Bounded wait for an async condition. */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
