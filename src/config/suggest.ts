// "Did you mean …?" for names an operator types: config keys, ORBWEAVER_* variables, command-line
// options. A typo is refused with the closest known name, never silently ignored.

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The known name closest to `word` (case-insensitive), if it is close enough to be a typo of it. */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const kl = k.toLowerCase();
    const d = kl.startsWith(w) || w.startsWith(kl) ? Math.abs(kl.length - w.length) * 0.5 : distance(w, kl);
    if (d < bestD) { bestD = d; best = k; }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(w.length / 3)) ? best : undefined;
}

/** " (did you mean X?)" or "". */
export function didYouMean(word: string, known: Iterable<string>): string {
  const c = closest(word, known);
  return c ? ` (did you mean ${c}?)` : '';
}

/** Options every command takes (src/cli.ts reads them before the command sees its arguments). */
export const GLOBAL_OPTIONS = ['--port', '--host', '--data', '--config', '--help'];

/** The message for an option a command does not take (`known`: the command's own options). */
export function unknownOption(arg: string, known: string[], command: string): string {
  const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
  const what = name.startsWith('-') ? 'unknown option' : 'unexpected argument';
  return `${what} ${name} for "orbweaver ${command}"${didYouMean(name, [...known, ...GLOBAL_OPTIONS])}; see orbweaver ${command} --help`;
}
