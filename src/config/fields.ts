// Field builders shared by every config section, so each section reads as a table of
// key, type, default and description. Env names are derived from the key path (see env.ts);
// `env` meta gives an extra alias where the documented name differs.
import { z } from 'zod';

/** "24h", "30m", "15s", "250ms", or a number of milliseconds -> milliseconds. */
export function parseDuration(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) return NaN;
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Math.round(n * unit);
}

export const duration = (def: string, description: string) =>
  z
    .union([z.number(), z.string()])
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (!Number.isFinite(ms) || ms < 0) {
        ctx.addIssue({ code: 'custom', message: 'expected a duration such as 500ms, 15s, 30m, 24h or 1d' });
        return z.NEVER;
      }
      return ms;
    })
    .prefault(def)
    .describe(`${description} (duration: 500ms, 15s, 30m, 24h, 1d)`);

export const int = (def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.number().int().min(min).max(max).default(def).describe(description);

export const bool = (def: boolean, description: string) => z.boolean().default(def).describe(description);

export const str = (def: string, description: string) => z.string().default(def).describe(description);

export const strList = (def: string[], description: string) => z.array(z.string()).default(def).describe(description);

export const intList = (def: number[], description: string) => z.array(z.number().int().min(0)).default(def).describe(description);
