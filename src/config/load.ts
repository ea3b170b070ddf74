// Effective configuration: defaults < relay.config.json < ORBWEAVER_* env < command-line flags.
// A bad value raises ConfigError naming the key (and the variable or file that set it).
import { readFileSync, existsSync } from 'node:fs';
import { configSchema, type Config } from './schema.js';
import { envOverrides } from './env.js';

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
  const { values: fromEnv, sources } = envOverrides(configSchema, env);
  const merged = deepMerge(deepMerge(fromFile, fromEnv), opts.flags ?? {});
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const key = i.path.join('.') || '(top level)';
      const src = sources.get(key);
      const where = src ? ` (set by ${src})` : opts.flags && key in opts.flags ? ' (set by a flag)' : file ? ` (in ${file})` : '';
      return `config key "${key}"${where}: ${i.message}`;
    });
    throw new ConfigError(lines.join('\n'));
  }
  return result.data;
}
