#!/usr/bin/env node
// orbweaver <relay|spider|worker|sync|import|export|stats|verify|directory|config> — the only entry point.
//
// Only light modules are imported here: `orbweaver import` runs itself again with a bounded heap
// (src/app/heap-limit.ts) and then only waits, so it decides that before the config schema, the
// logger and the store load (~8 MB of anonymous memory in the waiting process instead of ~29).
import type { Config } from './config.js';
import { VERSION } from './relay/version.js';
import { didYouMean } from './config/suggest.js';
import { DataDirError, PRIVATE_UMASK } from './app/data-dir.js';
import { PartialStoreError, StoreBusyError } from './store/errors.js';
import { followParent, rerunWithHeapLimit } from './app/heap-limit.js';
import { UsageError } from './commands/args.js';
import { importHeapMb } from './commands/import-heap.js';

const USAGE = `orbweaver ${VERSION} — a Nostr relay with a built-in directory spider

usage: orbweaver [command] [options]

commands:
  relay            run the relay (default)
  config           print the effective configuration as JSON
  spider           run the directory spider every spider.interval; --once: one crawl and a summary
                   (--json). Events go to the relay that owns the data directory when it runs,
                   else into the store in this process (--relay URL, --local: choose)
  worker           a spider worker sharing the relay's crawl through Redis: --redis redis://...
                   --relay ws://home-relay:7447 (docs/scaling.md)
  sync <url>       reconcile with a remote relay through NIP-77 and transfer the difference:
                   --filter '<json>' --dir down|up|both --follow (docs/sync.md)
  import [file]    store events from JSONL (file or stdin) through the ingest path; summary on stderr
  export           write stored events as JSONL to stdout (--filter '<NIP-01 filter JSON>')
  backup <dir>     a consistent copy of the data directory into a new directory, while the relay
                   runs and writes (restore: copy it back with the relay stopped; docs/operating.md)
  stats            store size, index sizes, events per kind, top authors (--json, --top N)
  verify           check every derived index against the stored events (--json); --repair rebuilds
                   them from the events (both with the relay stopped)
  directory        every relay the spider knows: hop, state, last crawl, events, quirks, errors (--json)
  config --env     list every setting with its ORBWEAVER_* variable, default and description

options (override relay.config.json and ORBWEAVER_* variables):
  --port <n>       TCP port (default 7447)
  --host <addr>    listen address (default 127.0.0.1)
  --data <dir>     data directory (default ./data)
  --config <file>  config file (default ./relay.config.json when present)
  --help           this text
`;

interface Parsed {
  command: string;
  flags: Record<string, unknown>;
  file?: string;
  rest: string[];
  help: boolean;
}

export function parseArgs(argv: string[]): Parsed {
  const out: Parsed = { command: 'relay', flags: {}, rest: [], help: false };
  let i = 0;
  if (argv[0] && !argv[0].startsWith('-')) out.command = argv[i++];
  const value = (name: string) => {
    const v = argv[++i];
    if (v === undefined) throw new UsageError(`option ${name} needs a value`);
    return v;
  };
  for (; i < argv.length; i++) {
    const a = argv[i];
    const [name, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const take = () => (inline !== undefined ? inline : value(name));
    switch (name) {
      case '--port': {
        const v = take();
        out.flags.port = /^\d+$/.test(v) ? Number(v) : v;
        break;
      }
      case '--host': out.flags.host = take(); break;
      case '--data': out.flags.dataDir = take(); break;
      case '--config': out.file = take(); break;
      case '--help': case '-h':
        // a subcommand with its own options prints its own usage
        if (out.command === 'relay' || out.command === 'config') out.help = true;
        else out.rest.push('--help');
        break;
      default: out.rest.push(a);
    }
  }
  return out;
}

async function runRelay(config: Config): Promise<void> {
  const { loggerFor } = await import('./lib/logger.js');
  const logger = loggerFor(config);
  const { startApp } = await import('./app/app.js');
  let relay: Awaited<ReturnType<typeof startApp>> | undefined;
  let stopping = 0;
  const stop = (signal: string) => {
    if (stopping) {
      // Under `npm start` a Ctrl-C reaches the relay twice at once: from the terminal (npm and the
      // relay share its process group) and passed on by npm. Only a signal sent after the first
      // one's second has passed is an operator's "exit now".
      if (Date.now() - stopping < 1000) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = Date.now();
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long: exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    if (!relay) process.exit(0); // still starting: nothing acknowledged yet
    relay.close().then(
      () => { logger.info('stopped'); logger.flush(); setTimeout(() => process.exit(0), 50); },
      (e) => { logger.error({ err: e }, 'shutdown failed'); process.exit(1); },
    );
  };
  // installed before the relay listens, so a signal right after start-up is never fatal
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    relay = await startApp(config, logger);
  } catch (e) {
    // a start-up failure an operator can act on (port taken, data directory unusable): say it plainly
    const message = (e as Error).message;
    logger.fatal({ err: message }, 'relay could not start');
    logger.flush();
    process.stderr.write(`orbweaver: ${message}\n`);
    setTimeout(() => process.exit(1), 50);
  }
}

async function printEnvTable(): Promise<void> {
  const { envTable, configSchema } = await import('./config.js');
  for (const line of envTable(configSchema)) console.log(line);
}

/** `config --markdown`: the configuration reference, docs/configuration.md. */
async function printReference(): Promise<void> {
  const { markdownReference, configSchema } = await import('./config.js');
  process.stdout.write(markdownReference(configSchema).join('\n') + '\n');
}

/** Runs the command again with a V8 old space of `heapMb` (heap-limit.ts): the child's exit code, or null to run it here. */
function rerun(parsed: Parsed, heapMb: number): Promise<number> | null {
  if (heapMb <= 0 || parsed.rest.some((a) => a === '--help' || a === '-h')) return null;
  return rerunWithHeapLimit(heapMb);
}

export async function main(argv: string[]): Promise<number> {
  // before anything is created (and inherited by an import's or a spider's re-run): the data
  // directory 0700 and every file in it 0600, LMDB's included (app/data-dir.ts)
  process.umask(PRIVATE_UMASK);
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`orbweaver: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!COMMANDS.includes(parsed.command)) {
    process.stderr.write(`orbweaver: unknown command "${parsed.command}"${didYouMean(parsed.command, COMMANDS)}\n\n${USAGE}`);
    return 2;
  }
  // An import keeps a window of events alive: it runs with a bounded heap, from its --window
  // (importHeapMb), decided before the config loads (the child loads it, and says what is wrong with it)
  if (parsed.command === 'import') {
    const child = rerun(parsed, importHeapMb(parsed.rest));
    if (child) return child;
  }
  const { ConfigError, loadConfig } = await import('./config.js');
  let config: Config;
  try {
    config = loadConfig({ file: parsed.file, flags: parsed.flags });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`orbweaver: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  // spider and worker crawl for a long time: they run with a bounded heap too (spider.heapMb)
  if (parsed.command === 'spider' || parsed.command === 'worker') {
    const child = rerun(parsed, config.spider.heapMb);
    if (child) return child;
  }
  followParent();
  try {
    return await runCommand(parsed, config);
  } catch (e) {
    // mistakes an operator can fix: said plainly, with the path or option, without a stack trace
    if (!(e instanceof UsageError) && !(e instanceof DataDirError) && !(e instanceof PartialStoreError) && !(e instanceof StoreBusyError)) throw e;
    process.stderr.write(`orbweaver ${parsed.command}: ${e.message}\n`);
    return 2;
  }
}

const COMMANDS = ['relay', 'spider', 'worker', 'sync', 'import', 'export', 'backup', 'stats', 'verify', 'directory', 'config'];

async function runCommand(parsed: Parsed, config: Config): Promise<number> {
  const { rejectUnknown } = await import('./commands/common.js');
  switch (parsed.command) {
    case 'relay':
      rejectUnknown(parsed.rest, [], 'relay');
      await runRelay(config);
      return -1; // keeps running
    case 'import': {
      const { importCommand } = await import('./commands/import.js');
      return importCommand(config, parsed.rest);
    }
    case 'export': {
      const { exportCommand } = await import('./commands/export.js');
      return exportCommand(config, parsed.rest);
    }
    case 'backup': {
      const { backupCommand } = await import('./commands/backup.js');
      return backupCommand(config, parsed.rest);
    }
    case 'stats': {
      const { statsCommand } = await import('./commands/stats.js');
      return statsCommand(config, parsed.rest);
    }
    case 'verify': {
      const { verifyCommand } = await import('./commands/verify.js');
      return verifyCommand(config, parsed.rest);
    }
    case 'sync': {
      const { syncCommand } = await import('./commands/sync.js');
      return syncCommand(config, parsed.rest);
    }
    case 'directory': {
      const { directoryCommand } = await import('./commands/directory.js');
      return directoryCommand(config, parsed.rest);
    }
    case 'spider': {
      const { spiderCommand } = await import('./commands/spider.js');
      return spiderCommand(config, parsed.rest);
    }
    case 'worker': {
      const { workerCommand } = await import('./commands/worker.js');
      return workerCommand(config, parsed.rest);
    }
    case 'config':
      rejectUnknown(parsed.rest.filter((a) => a !== '--env' && a !== '--markdown'), ['--env', '--markdown'], 'config');
      if (parsed.rest.includes('--env')) await printEnvTable();
      else if (parsed.rest.includes('--markdown')) await printReference();
      else process.stdout.write(JSON.stringify((await import('./config/redact.js')).redactSecrets(config), null, 2) + '\n');
      return 0;
    default:
      throw new UsageError(`unknown command "${parsed.command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => { if (code >= 0) process.exitCode = code; },
  (e) => {
    process.stderr.write(`orbweaver: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
