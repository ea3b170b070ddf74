// Benchmark dispatcher: `npm run bench -- <name> --url ws://127.0.0.1:PORT [options]`.
// Every benchmark takes any relay URL, prints one JSON line per result on stdout and a readable
// table on stderr, and stops by itself.
import { formatHelp, parseArgs, UsageError } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { BenchError } from './lib/client.js';
import { ingest } from './ingest.js';
import { query } from './query.js';
import { fanout } from './fanout.js';
import { spiderFetch } from './spider-fetch.js';
import { idle } from './idle.js';
import { directory } from './directory.js';
import { negentropy } from './negentropy.js';
import { search } from './search.js';
import { attack } from './attack.js';
import { answers } from './answers.js';
import { searchEval } from './search-eval.js';
import { searchObserver } from './search-observer.js';
import { nip85Start } from './nip85-start.js';
import { quirkNetwork } from './quirk-network.js';

const BENCHES: Bench[] = [ingest, query, directory, fanout, spiderFetch, idle, negentropy, search, searchEval, searchObserver, nip85Start, attack, answers, quirkNetwork];

function help(): string {
  const parts = [
    'usage: npm run bench -- <benchmark> --url ws://HOST:PORT [options]',
    '       npm run bench -- <benchmark> --help',
    '',
    'Results: one JSON line per result on stdout; progress and a readable table on stderr.',
    'Events are generated and signed before any clock starts and cached under $TMPDIR/orbweaver-bench.',
    '',
    'benchmarks:',
  ];
  for (const b of BENCHES) {
    parts.push('', `  ${b.name} — ${b.summary}`, formatHelp(b.options));
  }
  return parts.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name ? 0 : 2;
  }
  const bench = BENCHES.find((b) => b.name === name);
  if (!bench) {
    console.error(`unknown benchmark "${name}"\n\n${help()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(`${bench.name} — ${bench.summary}\n\n${formatHelp(bench.options)}`);
    return 0;
  }
  try {
    const opts = parseArgs(rest, bench.options);
    // a benchmark without a url option starts the relays it measures itself (quirk-network)
    const needsUrl = bench.options.some((o) => o.name === 'url');
    if (needsUrl && !(opts.write && bench.name === 'search-eval') && !(opts.prepare && bench.name === 'nip85-start') && (!opts.url || !/^wss?:\/\//.test(String(opts.url)))) throw new UsageError('--url ws://HOST:PORT is required');
    if (opts.vs && !/^wss?:\/\//.test(String(opts.vs))) throw new UsageError(`--vs takes a relay URL (ws://HOST:PORT), got ${String(opts.vs)}`);
    await bench.run(opts);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${bench.name} options:\n${formatHelp(bench.options)}`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof BenchError) {
      console.error(`error: ${err.message}`);
      process.exit(1);
    }
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
