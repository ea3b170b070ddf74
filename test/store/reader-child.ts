// Processes that open a store beside its writer, for test/store/reader-gate.test.ts. Not a test
// file itself (no .test suffix).
//   mode "opens": opens the store read-only `times` times (stats, close), then prints "done".
//   mode "hold": asks the writer to hold (reader-gate.ts), prints "held <covered>", keeps the hold
//     `holdMs`, prints "released <Date.now()> <covered>" as it lets go, then exits.
//   mode "churn": asks again as soon as each hold is given, for `holdMs`; prints the Date.now() of
//     each hold as a JSON array.
import { enterReaderGate } from '../../src/store/reader-gate.js';
import { openStore } from '../../src/store/index.js';
import { sleep } from '../../src/lib/sleep.js';

interface Job {
  dir: string;
  mode: 'opens' | 'hold' | 'churn';
  times?: number;
  holdMs?: number;
}

const job = JSON.parse(process.argv[2]!) as Job;
if (job.mode === 'opens') {
  for (let i = 0; i < (job.times ?? 1); i++) {
    const store = await openStore({ dir: job.dir, readOnly: true });
    store.stats();
    await store.close();
  }
  process.stdout.write('done\n');
} else if (job.mode === 'churn') {
  const start = Date.now();
  const until = start + (job.holdMs ?? 1000);
  const heldAt: number[] = [];
  while (Date.now() < until) {
    const gate = await enterReaderGate(job.dir);
    if (!gate) throw new Error(`no live writer of ${job.dir} to hold`);
    heldAt.push(Date.now());
    gate.release();
  }
  process.stdout.write(JSON.stringify(heldAt) + '\n');
} else {
  const gate = await enterReaderGate(job.dir);
  if (!gate) throw new Error(`no live writer of ${job.dir} to hold`);
  process.stdout.write(`held ${gate.covered()}\n`);
  await sleep(job.holdMs ?? 300);
  const covered = gate.covered();
  const at = Date.now();
  gate.release();
  process.stdout.write(`released ${at} ${covered}\n`);
}
