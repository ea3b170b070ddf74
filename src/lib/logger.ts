// Logs through pino, to stderr so stdout stays free for command output (export, config, --json).
// JSON lines by default (for journald, docker logs, log shippers); readable lines when a person
// watches: logFormat 'pretty', or 'auto' (the default) when stderr — where the logs go — is a
// terminal. The readable form is a small formatter over pino's own JSON, so both carry the same fields.
import { pino, destination, type Logger } from 'pino';

export type { Logger };
export type LogFormat = 'auto' | 'json' | 'pretty';

export function createLogger(level: string, format: LogFormat = 'auto'): Logger {
  const pretty = format === 'pretty' || (format === 'auto' && process.stderr.isTTY === true);
  const dest = pretty ? prettyStream(process.stderr, process.stderr.isTTY === true) : destination({ dest: 2, sync: false });
  return pino({ level, base: { app: 'orbweaver' } }, dest);
}

/** The relay's logger as configured (logLevel, logFormat). */
export const loggerFor = (c: { logLevel: string; logFormat?: LogFormat }) => createLogger(c.logLevel, c.logFormat);

/** Commands (import, stats, …) print their own output: their logs start at warn unless asked for more. */
export const commandLogger = (c: { logLevel: string; logFormat?: LogFormat }) => createLogger(c.logLevel === 'info' ? 'warn' : c.logLevel, c.logFormat);

const LEVELS: Record<number, [string, string]> = {
  10: ['TRACE', '90'], 20: ['DEBUG', '36'], 30: ['INFO', '32'], 40: ['WARN', '33'], 50: ['ERROR', '31'], 60: ['FATAL', '35'],
};
const SKIP = new Set(['level', 'time', 'msg', 'app', 'pid', 'hostname', 'component', 'err']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One pino JSON line as "07:45:12.345Z INFO  [spider] message key=value …", with an error's stack
 * indented below. Times are UTC, like everything the relay shows.
 */
export function formatLogLine(line: string, color = false): string {
  let o: Record<string, unknown>;
  try { o = JSON.parse(line); } catch { return line.endsWith('\n') ? line : line + '\n'; }
  const [name, code] = LEVELS[o.level as number] ?? [String(o.level), '0'];
  const time = new Date(typeof o.time === 'number' ? o.time : Date.now()).toISOString().slice(11, 23) + 'Z';
  const lvl = color ? `\x1b[${code}m${name.padEnd(5)}\x1b[0m` : name.padEnd(5);
  const comp = o.component ? `[${o.component}] ` : '';
  const fields = Object.entries(o).filter(([k]) => !SKIP.has(k)).map(([k, v]) => `${k}=${value(v)}`);
  let out = `${time} ${lvl} ${comp}${o.msg ?? ''}${fields.length ? '  ' + fields.join(' ') : ''}\n`;
  const err = o.err as { message?: string; stack?: string } | string | undefined;
  if (typeof err === 'string') out = out.slice(0, -1) + `  err=${value(err)}\n`;
  else if (err) out += (err.stack ?? err.message ?? JSON.stringify(err)).split('\n').map((l) => `    ${l}\n`).join('');
  return out;
}

function prettyStream(out: NodeJS.WriteStream, color: boolean) {
  return { write: (line: string) => { out.write(formatLogLine(line, color)); } };
}
