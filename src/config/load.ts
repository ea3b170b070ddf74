// Effective configuration: defaults < relay.config.json < ORBWEAVER_* env < command-line flags.
// The configuration is checked as a whole before anything starts: a bad value raises ConfigError
// naming the key (and the variable, flag or file that set it), and a name nothing reads — an
// unknown key in the file, an unknown ORBWEAVER_* variable — is refused with the closest known
// name, the same way on every path (flags: src/cli.ts).
import { readFileSync, existsSync } from 'node:fs';
import { configSchema, type Config } from './schema.js';
import { envOverrides, leaves, unknownVariables } from './env.js';
import { didYouMean } from './suggest.js';

export class ConfigError extends Error {}

export const DEFAULT_CONFIG_FILE = 'relay.config.json';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

export interface LoadOptions {
  /** config file; when not given, relay.config.json in the working directory if it exists */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** flag overrides, already nested (e.g. { port: 9000 }) */
  flags?: Record<string, unknown>;
}

function flatten(o: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (isObject(v)) Object.assign(out, flatten(v, `${prefix}${k}.`));
    else out[prefix + k] = v;
  }
  return out;
}

/** "unknown config key "limits.maxLimt" in relay.config.json (did you mean limits.maxLimit?)" */
function unknownKey(path: string[], file: string | undefined): string {
  const known = leaves(configSchema).map((l) => l.path.join('.'));
  const sections = new Set(leaves(configSchema).flatMap((l) => l.path.slice(0, -1).map((_, i) => l.path.slice(0, i + 1).join('.'))));
  const key = path.join('.');
  return `unknown config key "${key}"${file ? ` in ${file}` : ''}${didYouMean(key, [...known, ...sections])}`;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.file ?? env.ORBWEAVER_CONFIG ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
  let fromFile: Record<string, unknown> = {};
  if (file) {
    let text: string;
    try { text = readFileSync(file, 'utf8'); } catch (e) { throw new ConfigError(`cannot read config file ${file}: ${(e as Error).message}`); }
    try { fromFile = JSON.parse(text); } catch (e) { throw new ConfigError(`config file ${file} is not valid JSON: ${(e as Error).message}`); }
    if (!isObject(fromFile)) throw new ConfigError(`config file ${file} must hold a JSON object`);
    delete fromFile.$comment;
  }
  const unknown = unknownVariables(configSchema, env);
  if (unknown.length) {
    throw new ConfigError(unknown.map((u) => `unknown environment variable ${u.name}${u.suggestion ? ` (did you mean ${u.suggestion}?)` : ''}`).join('\n') +
      '\nevery variable: orbweaver config --env');
  }
  const { values: fromEnv, sources } = envOverrides(configSchema, env);
  const merged = deepMerge(deepMerge(fromFile, fromEnv), opts.flags ?? {});
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const where = (key: string) => {
      const src = sources.get(key);
      return src ? ` (set by ${src})` : flagKeys.has(key) ? ' (set by a flag)' : file ? ` (in ${file})` : '';
    };
    const flagKeys = new Set(Object.keys(flatten(opts.flags ?? {})));
    const lines = result.error.issues.flatMap((i) => {
      // only the file can hold keys the schema does not know (env and flags are derived from it)
      if (i.code === 'unrecognized_keys') return i.keys.map((k) => unknownKey([...i.path.map(String), k], file));
      // a list entry (spider.seeds.1) is reported on its list, where it was set
      const key = i.path.filter((p) => typeof p === 'string').join('.') || '(top level)';
      const last = i.path[i.path.length - 1];
      const item = typeof last === 'number' ? ` entry ${last}` : '';
      return [`config key "${key}"${where(key)}${item}: ${i.message}`];
    });
    throw new ConfigError(lines.join('\n'));
  }
  return result.data;
}
