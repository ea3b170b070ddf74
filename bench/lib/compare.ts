// Side by side: one benchmark against two relays in alternation. A shared or virtual machine drifts
// by tens of percent over minutes (other tenants, steal time), so measuring all of relay A and then
// all of relay B puts the drift into the ratio. Here every shape is measured on A and on B back to
// back, the order flips every round (A B, B A, A B, ...), and the summary gives each relay's median
// and the ratio of the medians, beside the ratio of every round.
import type { OptSpec, Opts } from './args.js';
import { num, str } from './args.js';
import { round } from './histogram.js';
import { table } from './report.js';

export const VS_OPTS: OptSpec[] = [
  { name: 'vs', type: 'string', default: '', help: 'a second relay URL, measured in alternation with --url (A B, then B A, ...); the summary gives the ratio --url / --vs per shape' },
  { name: 'vs-pid', type: 'int', help: 'process id of the --vs relay (its CPU readings, as --pid)' },
  { name: 'vs-label', type: 'string', default: '', help: 'label of the --vs relay in the results (as --label)' },
  { name: 'rounds', type: 'int', default: 1, help: 'measurements of each shape on each relay; the summary reports medians' },
];

export interface Side {
  /** 'a' is --url, 'b' is --vs */
  key: 'a' | 'b';
  url: string;
  pid?: number;
  label: string;
}

/** The relays to measure: --url, and --vs when given. */
export function sidesOf(o: Opts): Side[] {
  const a: Side = { key: 'a', url: str(o, 'url'), pid: o.pid as number | undefined, label: str(o, 'label') };
  const vs = str(o, 'vs');
  if (!vs) return [a];
  return [a, { key: 'b', url: vs, pid: o['vs-pid'] as number | undefined, label: str(o, 'vs-label') }];
}

export const roundsOf = (o: Opts): number => Math.max(1, num(o, 'rounds') || 1);

/** Round r (1-based) measures in this order: A B in odd rounds, B A in even ones. */
export function orderOf<T>(sides: T[], r: number): T[] {
  return r % 2 === 1 ? sides : [...sides].reverse();
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One measured figure (queries/s, events/s) of one shape on one relay in one round. */
export interface Sample {
  shape: string;
  side: 'a' | 'b';
  round: number;
  rate: number;
  p50: number;
  p99: number;
}

/** Labels of the two relays for table headings. */
const nameOf = (s: Side): string => s.label || s.url;

/**
 * The summary table: per shape, each relay's median rate (and median p50/p99), the ratio of the
 * medians and every round's own ratio. With one relay it is the medians alone.
 */
export function summaryTable(title: string, unit: string, sides: Side[], samples: Sample[]): void {
  const shapes = [...new Set(samples.map((s) => s.shape))];
  const rows = shapes.map((shape) => {
    const of = (side: 'a' | 'b') => samples.filter((s) => s.shape === shape && s.side === side);
    const row: Record<string, string | number> = { shape };
    const med: Record<string, number> = {};
    for (const side of sides) {
      const xs = of(side.key);
      med[side.key] = median(xs.map((s) => s.rate));
      row[`${side.key}: ${unit}`] = Math.round(med[side.key]!);
      row[`${side.key}: p50/p99 ms`] = `${round(median(xs.map((s) => s.p50)), 2)} / ${round(median(xs.map((s) => s.p99)), 2)}`;
    }
    if (sides.length === 2) {
      row['a/b'] = `${round(med.a! / med.b!, 2)}x`;
      const b = of('b');
      row['each round'] = of('a')
        .map((x) => {
          const y = b.find((v) => v.round === x.round);
          return y ? String(round(x.rate / y.rate, 2)) : '-';
        })
        .join(' ');
    }
    return row;
  });
  const heading = sides.map((s) => `${s.key} = ${nameOf(s)}`).join(', ');
  table(`${title}: medians of ${Math.max(...samples.map((s) => s.round))} round(s); ${heading}`, rows);
}
