// What each benchmark module exports, for the dispatcher in run.ts.
import type { OptSpec, Opts } from './args.js';

export interface Bench {
  name: string;
  summary: string;
  options: OptSpec[];
  run(opts: Opts): Promise<void>;
}

/** Options of the data set, shared by ingest, query and spider-fetch. */
export const DATASET_OPTS: OptSpec[] = [
  { name: 'count', type: 'int', default: 50_000, help: 'events in the data set' },
  { name: 'authors', type: 'int', default: 64, help: 'authors (keys) in the data set' },
  { name: 'span', type: 'int', default: 86_400, help: 'created_at spread over the last this many seconds' },
];

export const LOAD_OPTS: OptSpec[] = [
  { name: 'load', type: 'bool', default: true, help: 'publish the data set first (--no-load when the relay already has it)' },
  { name: 'load-connections', type: 'int', default: 16, help: 'connections used to load the data set' },
  { name: 'load-inflight', type: 'int', default: 200, help: 'events in flight per connection while loading' },
];
