// The effective configuration as `orbweaver config` prints it: settings marked secret in the schema
// (spider.workerKey) are hidden, and a password inside any URL-valued setting (spider.redis,
// redis://:secret@host) is masked, so the output can be pasted into an issue or a chat.
import { configSchema, type Config } from './schema.js';
import { leaves } from './env.js';

/** A URL's password replaced by ***: redis://user:secret@host -> redis://user:***@host. */
export const maskUrlPassword = (v: string): string => v.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:\s]*:)[^/@\s]*@/i, '$1***@');

export function redactSecrets(config: Config): Config {
  const out = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
  const secret = new Set(leaves(configSchema).filter((l) => l.secret).map((l) => l.path.join('.')));
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const path = prefix + k;
      if (secret.has(path)) o[k] = v ? '(set, hidden)' : '';
      else if (typeof v === 'string') o[k] = maskUrlPassword(v);
      else if (Array.isArray(v)) o[k] = v.map((x) => (typeof x === 'string' ? maskUrlPassword(x) : x));
      else if (v && typeof v === 'object') walk(v as Record<string, unknown>, path + '.');
    }
  };
  walk(out, '');
  return out as Config;
}
