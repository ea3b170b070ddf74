// Tiny command-line option parser shared by every benchmark: typed options with defaults and help.

export type OptType = 'string' | 'int' | 'number' | 'bool' | 'list';

export interface OptSpec {
  name: string;
  type: OptType;
  default?: string | number | boolean | string[];
  help: string;
}

export type Opts = Record<string, string | number | boolean | string[] | undefined>;

/** Options every benchmark accepts. */
export const COMMON_OPTS: OptSpec[] = [
  { name: 'url', type: 'string', help: 'relay WebSocket URL, e.g. ws://127.0.0.1:7447 (required)' },
  { name: 'pid', type: 'int', help: "relay process id: adds the relay's CPU per thread, RSS and machine CPU to each result (Linux /proc)" },
  { name: 'seed', type: 'string', default: '1', help: 'data set seed: keys and events are derived from it (change it to get events the relay has not seen)' },
  { name: 'regen', type: 'bool', default: false, help: 'regenerate the cached, pre-signed event set instead of reading it from the cache' },
  { name: 'label', type: 'string', default: '', help: 'free text copied into every JSON result (e.g. relay name)' },
  { name: 'quiet-wait', type: 'int', default: 0, help: 'before each measurement wait up to this many seconds for the machine to be idle (shared machines)' },
];

export class UsageError extends Error {}

export function parseArgs(argv: string[], specs: OptSpec[]): Opts {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const out: Opts = {};
  for (const s of specs) if (s.default !== undefined) out[s.name] = s.default;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument ${arg}`);
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    let spec = byName.get(name);
    if (!spec && name.startsWith('no-') && byName.get(name.slice(3))?.type === 'bool') {
      spec = byName.get(name.slice(3))!;
      out[spec.name] = false;
      continue;
    }
    if (!spec) throw new UsageError(`unknown option --${name}`);
    if (spec.type === 'bool') {
      out[spec.name] = value === undefined ? true : !/^(false|0|no)$/i.test(value);
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    switch (spec.type) {
      case 'int': {
        const n = Number(value.replace(/_/g, ''));
        if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} must be an integer, got ${value}`);
        out[spec.name] = n;
        break;
      }
      case 'number': {
        const n = Number(value);
        if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got ${value}`);
        out[spec.name] = n;
        break;
      }
      case 'list':
        out[spec.name] = value.split(',').map((s) => s.trim()).filter(Boolean);
        break;
      default:
        out[spec.name] = value;
    }
  }
  return out;
}

export function formatHelp(specs: OptSpec[], indent = '    '): string {
  const lines: string[] = [];
  for (const s of specs) {
    const flag = s.type === 'bool' ? `--${s.name}` : `--${s.name} ${s.type === 'list' ? 'A,B,..' : s.type === 'string' ? 'S' : 'N'}`;
    const def = s.default === undefined || s.default === '' ? '' : ` [default: ${Array.isArray(s.default) ? s.default.join(',') : String(s.default)}]`;
    lines.push(`${indent}${flag.padEnd(30)} ${s.help}${def}`);
  }
  return lines.join('\n');
}

export const str = (o: Opts, k: string): string => String(o[k] ?? '');
export const num = (o: Opts, k: string): number => Number(o[k]);
export const flag = (o: Opts, k: string): boolean => o[k] === true;
export const list = (o: Opts, k: string): string[] => (Array.isArray(o[k]) ? (o[k] as string[]) : []);
