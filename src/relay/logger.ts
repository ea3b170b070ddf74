// JSON logs through pino, to stderr so stdout stays free for command output (export, config).
import { pino, destination, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { app: 'orbweaver' } }, destination({ dest: 2, sync: false }));
}
