// Runs `orbweaver <args>` as an operator would (node dist/src/cli.js), either to completion
// (runCli) or in the background with its logs collected (spawnCli); runNode runs any script so.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { CLI, ROOT } from './relay-process.js';

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  /** run as this user (the tests run as root in CI: permission checks need another uid) */
  uid?: number;
  gid?: number;
  timeoutMs?: number;
}

/** The environment without any ORBWEAVER_* variable of the caller's shell, plus `extra`. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ORBWEAVER_')) env[k] = v;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function runCli(args: string[], opts: CliOptions = {}) {
  return runNode(CLI, args, opts);
}

/** Runs `node <script> <args>` to completion: the CLI (runCli) or a script of bench/ (a path under dist/). */
export function runNode(script: string, args: string[], opts: CliOptions = {}) {
  const r = spawnSync(process.execPath, [script, ...args], {
    cwd: opts.cwd ?? ROOT, env: cleanEnv({ ORBWEAVER_LOG_LEVEL: 'warn', ...opts.env }), input: opts.input, encoding: 'utf8',
    timeout: opts.timeoutMs ?? 60_000, killSignal: 'SIGKILL', uid: opts.uid, gid: opts.gid, maxBuffer: 64 << 20,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Like runCli, without blocking the event loop (for tests that serve relays in this process). */
export async function runCliAsync(args: string[], opts: CliOptions = {}) {
  const c = spawnCli(args, { ...opts, env: { ORBWEAVER_LOG_LEVEL: 'warn', ...opts.env } });
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const status = await c.exited;
  clearTimeout(timer);
  return { status, stdout: c.stdout(), stderr: c.stderr() };
}

export interface BackgroundCli {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** JSON log lines seen on stderr so far */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  /** resolves when a log line satisfies `pred` (rejects after timeoutMs or when the process exits first) */
  waitForLog(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number, what?: string): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnCli(args: string[], opts: CliOptions = {}): BackgroundCli {
  const proc = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT, env: cleanEnv({ ORBWEAVER_LOG_LEVEL: 'info', ...opts.env }), stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'], uid: opts.uid, gid: opts.gid,
  });
  if (opts.input !== undefined) proc.stdin!.end(opts.input);
  let out = '', err = '', buf = '';
  let done = false;
  const logs: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try { logs.push(JSON.parse(line)); } catch { /* not a log line */ }
    }
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => { done = true; for (const w of [...waiters]) w(); resolve(code); }));
  return {
    proc, logs, exited,
    stdout: () => out,
    stderr: () => err,
    waitForLog(pred, timeoutMs = 30_000, what = 'log line') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = logs.find(pred);
          if (hit) { finish(); resolve(hit); } else if (done) { finish(); reject(new Error(`exited (${proc.exitCode}) before ${what}:\n${err}`)); }
        };
        const timer = setTimeout(() => { finish(); reject(new Error(`timed out waiting for ${what}:\n${err}`)); }, timeoutMs);
        const finish = () => { clearTimeout(timer); waiters.delete(check); };
        waiters.add(check);
        check();
      });
    },
    async kill(signal = 'SIGTERM') {
      if (!done) proc.kill(signal);
      return exited;
    },
  };
}
