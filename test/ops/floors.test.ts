// The rooms of src/ import one way, down the floors DESIGN.md writes down once ("Imports run one
// way, down these floors: commands → app → {…} → …"): this test reads that sentence and every
// relative import in src/, and fails on an import that runs up a floor, one between two services
// (the floor of relay, spider, monitor, sync and trust: app/ wires them), or a circle between two
// rooms of one floor. A file directly in src/ belongs to the room of its name (cli.ts: commands,
// config.ts: config).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { ROOT } from '../helpers/relay-process.js';

const DESIGN = join(ROOT, '..', 'shared', 'DESIGN.md');
const SRC = join(ROOT, 'src');
const ROOT_FILES: Record<string, string> = { 'cli.ts': 'commands', 'config.ts': 'config', 'cli.js': 'commands', 'config.js': 'config' };

/** The floors, top first, from DESIGN.md's sentence. */
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

test('src/ imports run down the floors DESIGN.md names, services never import each other, no circles within a floor', { skip: existsSync(DESIGN) ? false : `${DESIGN} is not beside the project` }, () => {
  const fl = floors();
  const floorOf = new Map(fl.flatMap((rooms, i) => rooms.map((r) => [r, i] as const)));
  const services = fl.find((rooms) => rooms.includes('relay'))!;
  const wrong: string[] = [];
  const sameFloor = new Map<string, Set<string>>();
  for (const file of tsFiles(SRC)) {
    const a = roomOf(file);
    if (!floorOf.has(a)) {
      wrong.push(`${relative(ROOT, file)}: room "${a}" is on no floor of DESIGN.md`);
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

test('the floors test catches an import up a floor (its own rules, on a made-up file)', { skip: existsSync(DESIGN) ? false : `${DESIGN} is not beside the project` }, () => {
  const fl = floors();
  const floorOf = new Map(fl.flatMap((rooms, i) => rooms.map((r) => [r, i] as const)));
  assert.ok(floorOf.get('store')! > floorOf.get('relay')!, 'store sits below relay');
  assert.equal(roomOf(join(SRC, 'store', 'writer.ts')), 'store');
  assert.equal(roomOf(join(SRC, 'cli.ts')), 'commands');
  const m = [...`import { x } from '../relay/server.js';`.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)][0]!;
  assert.equal(roomOf(normalize(join(SRC, 'store', m[1]!))), 'relay', 'an import of relay/ from store/ is seen as one');
});
