// ORBWEAVER_* environment overrides, derived by walking the schema: the key path in
// SCREAMING_SNAKE_CASE (spider.bootstrapRelays -> ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS), plus any alias
// given as `meta({ env })`. Values are converted by the leaf's type: numbers, booleans
// (1/0/true/false/on/off/yes/no), lists (comma-separated), strings as they are.
import type { z } from 'zod';
import { closest } from './suggest.js';

export const ENV_PREFIX = 'ORBWEAVER_';

export interface Leaf {
  path: string[];
  envNames: string[];
  kind: 'number' | 'boolean' | 'list' | 'intlist' | 'string';
  schema: z.ZodType;
  /** its value is never printed (meta({ secret: true })) */
  secret: boolean;
}

/** Variables read outside the schema. */
const OTHER_VARIABLES = [ENV_PREFIX + 'CONFIG'];

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

// zod 4 internals: every schema has _zod.def with a `type`; wrappers keep their inner schema.
type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[]; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const def = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

function unwrap(s: z.ZodType): z.ZodType {
  for (;;) {
    const d = def(s);
    if (d.innerType && ['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch'].includes(d.type)) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

function meta(s: z.ZodType): Record<string, unknown> {
  return (s as unknown as { meta(): Record<string, unknown> | undefined }).meta?.() ?? {};
}

export function leaves(schema: z.ZodType, path: string[] = []): Leaf[] {
  const base = unwrap(schema);
  const d = def(base);
  if (d.type === 'object' && d.shape) {
    return Object.entries(d.shape).flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  let kind: Leaf['kind'] = 'string';
  if (d.type === 'number') kind = 'number';
  else if (d.type === 'boolean') kind = 'boolean';
  else if (d.type === 'array') kind = def(unwrap(d.element!)).type === 'number' ? 'intlist' : 'list';
  const envNames = [ENV_PREFIX + path.map(snake).join('_')];
  const m = { ...meta(base), ...meta(schema) };
  if (typeof m.env === 'string') envNames.push(ENV_PREFIX + m.env);
  return [{ path, envNames, kind, schema, secret: m.secret === true }];
}

/**
 * The default of a leaf as the schema writes it (a duration as '10m', not 600000 ms), in the form
 * its variable takes: lists comma-separated, booleans true/false. Undefined when it has none.
 */
export function defaultText(leaf: Leaf): string | undefined {
  let s = leaf.schema;
  for (;;) {
    const d = def(s) as Def & { defaultValue?: unknown };
    if (d.type === 'default' || d.type === 'prefault') {
      const v = d.defaultValue;
      return Array.isArray(v) ? v.join(',') : v === undefined || v === null ? undefined : String(v);
    }
    if (d.innerType && ['optional', 'nullable', 'readonly', 'catch'].includes(d.type)) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return undefined;
  }
}

/** A value as a shell (and a .env file) reads it: quoted where it is empty or has spaces or quotes. */
const shellWord = (v: string) => (/^[\w.,:/@+=%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/**
 * `orbweaver config --env`: one line per setting, `VARIABLE=default  # key: meaning`, so the
 * listing reads as a commented environment file an operator can copy lines from.
 */
export function envTable(schema: z.ZodType): string[] {
  const out = ['# every setting: VARIABLE=default  # key (other variable names): meaning. Lists are comma-separated.'];
  for (const leaf of leaves(schema)) {
    const [name, ...aliases] = leaf.envNames;
    const desc = (leaf.schema as { description?: string }).description ?? '';
    const key = leaf.path.join('.') + (aliases.length ? ` (also ${aliases.join(', ')})` : '');
    out.push(`${name}=${shellWord(defaultText(leaf) ?? '')}  # ${key}: ${desc}`);
  }
  return out;
}

/** Converts an env string by the leaf's type; leaves validation to the schema. */
export function fromEnv(leaf: Leaf, raw: string): unknown {
  switch (leaf.kind) {
    case 'number': {
      const t = raw.trim();
      return t !== '' && Number.isFinite(Number(t)) ? Number(t) : raw;
    }
    case 'boolean': {
      const t = raw.trim().toLowerCase();
      if (['1', 'true', 'on', 'yes'].includes(t)) return true;
      if (['0', 'false', 'off', 'no', ''].includes(t)) return false;
      return raw;
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    case 'intlist':
      return raw.split(',').map((s) => s.trim()).filter(Boolean).map((s) => (Number.isFinite(Number(s)) ? Number(s) : s));
    default:
      return raw;
  }
}

/** The overrides found in `env`, as a nested object, with the variable that set each leaf. */
export function envOverrides(schema: z.ZodType, env: NodeJS.ProcessEnv): { values: Record<string, unknown>; sources: Map<string, string> } {
  const values: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  for (const leaf of leaves(schema)) {
    for (const name of leaf.envNames) {
      const raw = env[name];
      if (raw === undefined) continue;
      setPath(values, leaf.path, fromEnv(leaf, raw));
      sources.set(leaf.path.join('.'), name);
    }
  }
  return { values, sources };
}

/** ORBWEAVER_* variables in `env` that no setting reads, each with the closest known name. */
export function unknownVariables(schema: z.ZodType, env: NodeJS.ProcessEnv): Array<{ name: string; suggestion?: string }> {
  const known = new Set([...leaves(schema).flatMap((l) => l.envNames), ...OTHER_VARIABLES]);
  return Object.keys(env)
    .filter((k) => k.startsWith(ENV_PREFIX) && !known.has(k))
    .sort()
    .map((name) => ({ name, suggestion: closest(name, known) }));
}

export function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let o = obj;
  for (const k of path.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
  o[path[path.length - 1]] = value;
}
