// The rooms of src/ import one way, down the floors docs/architecture.md writes down once ("Imports
// run one way, down these floors: commands → app → {…} → …"): this test reads that sentence and
// every relative import in src/, and fails on an import that runs up a floor, one between two
// services (the floor of relay, spider, monitor, sync and trust: app/ wires them), a circle between
// two rooms of one floor, or a loop of value imports between files anywhere. A file directly in src/
// belongs to the room of its name (cli.ts: commands, config.ts: config).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { ROOT } from '../helpers/relay-process.js';

const DESIGN = join(ROOT, 'docs', 'architecture.md');
const SRC = join(ROOT, 'src');
const ROOT_FILES: Record<string, string> = { 'cli.ts': 'commands', 'config.ts': 'config', 'cli.js': 'commands', 'config.js': 'config' };

/** The floors, top first, from docs/architecture.md's sentence. */
function floors(): string[][] {
  const text = readFileSync(DESIGN, 'utf8').replace(/\s+/g, ' ');
  const m = /Imports run one way, down these floors: ([^.]+)\./.exec(text);
  assert.ok(m, `${DESIGN} no longer says "Imports run one way, down these floors: …."`);
  return m[1]!.split('→').map((f) => f.replace(/[{}]/g, '').split(',').map((r) => r.trim()).filter(Boolean));
}

function* tsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts')) yield p;
  }
}

const roomOf = (file: string): string => {
  const parts = relative(SRC, file).split(sep);
  return parts.length === 1 ? (ROOT_FILES[parts[0]!] ?? parts[0]!) : parts[0]!;
};

test('src/ imports run down the floors docs/architecture.md names, services never import each other, no circles within a floor', () => {
  const fl = floors();
  const floorOf = new Map(fl.flatMap((rooms, i) => rooms.map((r) => [r, i] as const)));
  const services = fl.find((rooms) => rooms.includes('relay'))!;
  const wrong: string[] = [];
  const sameFloor = new Map<string, Set<string>>();
  for (const file of tsFiles(SRC)) {
    const a = roomOf(file);
    if (!floorOf.has(a)) {
      wrong.push(`${relative(ROOT, file)}: room "${a}" is on no floor of docs/architecture.md`);
      continue;
    }
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const b = roomOf(normalize(join(dirname(file), m[1]!)));
      if (a === b || !floorOf.has(b)) continue;
      const fa = floorOf.get(a)!;
      const fb = floorOf.get(b)!;
      if (fb < fa) wrong.push(`${relative(ROOT, file)} imports ${m[1]}: ${a} is below ${b}`);
      else if (fb === fa && services.includes(a)) wrong.push(`${relative(ROOT, file)} imports ${m[1]}: services (${services.join(', ')}) never import each other`);
      else if (fb === fa) {
        const s = sameFloor.get(a) ?? new Set<string>();
        s.add(b);
        sameFloor.set(a, s);
      }
    }
  }
  for (const [a, bs] of sameFloor) for (const b of bs) if (sameFloor.get(b)?.has(a)) wrong.push(`${a} and ${b} import each other`);
  assert.deepEqual(wrong, []);
});

test('the floors test catches an import up a floor (its own rules, on a made-up file)', () => {
  const fl = floors();
  const floorOf = new Map(fl.flatMap((rooms, i) => rooms.map((r) => [r, i] as const)));
  assert.ok(floorOf.get('store')! > floorOf.get('relay')!, 'store sits below relay');
  assert.equal(roomOf(join(SRC, 'store', 'writer.ts')), 'store');
  assert.equal(roomOf(join(SRC, 'cli.ts')), 'commands');
  const m = [...`import { x } from '../relay/server.js';`.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)][0]!;
  assert.equal(roomOf(normalize(join(SRC, 'store', m[1]!))), 'relay', 'an import of relay/ from store/ is seen as one');
});

/** A file's relative imports that exist at run time (not `import type`, not `{ type A, type B }`), resolved to .ts paths. */
function valueImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/gm)) {
    const spec = m[3] ?? m[4]!;
    if (m[1]) continue; // import type …
    const names = m[2];
    if (names !== undefined && /^\{[^}]*\}$/.test(names.trim())) {
      const parts = names.trim().slice(1, -1).split(',').map((x) => x.trim()).filter(Boolean);
      if (parts.length > 0 && parts.every((x) => x.startsWith('type '))) continue;
    }
    out.push(normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts'));
  }
  return out;
}

/** Every loop of value imports between files: each as its files in order (strongly connected parts of more than one file). */
function importLoops(files: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of files.get(v) ?? []) {
      if (!files.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) loops.push(part.sort());
    }
  };
  for (const v of files.keys()) if (!idx.has(v)) visit(v);
  return loops;
}

test('no loop of value imports between files anywhere in src/', () => {
  const files = new Map<string, string[]>();
  for (const file of tsFiles(SRC)) files.set(file, valueImports(file, readFileSync(file, 'utf8')));
  const loops = importLoops(files).map((l) => l.map((f) => relative(SRC, f)).join(' ↔ '));
  assert.deepEqual(loops, [], 'each loop is a room that should be one file, or a value that belongs a floor down (docs/architecture.md)');
});

test('the loop check sees a loop through three files, and not one made of type imports', () => {
  const f = (n: string) => join(SRC, 'x', `${n}.ts`);
  assert.deepEqual(valueImports(f('a'), "import { type A, type B } from './b.js';\nimport type { C } from './c.js';\n"), []);
  assert.deepEqual(valueImports(f('a'), "import { x, type B } from './b.js';\nconst m = await import('./c.js');\n"), [f('b'), f('c')]);
  const loops = importLoops(new Map([[f('a'), [f('b')]], [f('b'), [f('c')]], [f('c'), [f('a')]], [f('d'), [f('a')]]]));
  assert.deepEqual(loops, [[f('a'), f('b'), f('c')]]);
});
