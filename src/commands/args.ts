// Taking a command's options out of its arguments. Nothing here loads the config schema or the
// store: cli.ts reads `orbweaver import`'s sizes with it before it runs the import again with a
// bounded heap (import-heap.ts), and the process that then only waits holds as little as it can.

/** Takes `--name value` or `--name=value` out of argv; undefined when absent. */
export function takeOption(argv: string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === name) {
      const v = argv[i + 1];
      if (v === undefined) throw new UsageError(`option ${name} needs a value`);
      argv.splice(i, 2);
      return v;
    }
    if (a.startsWith(name + '=')) {
      argv.splice(i, 1);
      return a.slice(name.length + 1);
    }
  }
  return undefined;
}

export function takeFlag(argv: string[], name: string): boolean {
  const i = argv.indexOf(name);
  if (i < 0) return false;
  argv.splice(i, 1);
  return true;
}

export class UsageError extends Error {}
