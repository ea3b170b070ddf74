import { open } from 'lmdb';
const env = open({ path: '/tmp/owq', readOnly: true, maxDbs: 64, noReadAhead: process.env.RA ? false : true, mapSize: 64 * 1024 ** 3 });
const events = env.openDB({ name: 'ev.events', keyEncoding: 'binary', encoding: 'binary' });
// collect serial keys
const keys = [];
for (const k of events.getKeys({ limit: 600000 })) keys.push(Buffer.from(k));
console.log('keys', keys.length);
const N = 200000;
let bytes = 0;
for (let pass = 0; pass < 3; pass++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    const k = keys[(Math.random() * keys.length) | 0];
    const v = events.getBinaryFast(k);
    bytes += v.length;
  }
  const t1 = process.hrtime.bigint();
  console.log('pass', pass, 'µs/get', Number(t1 - t0) / 1000 / N, 'avg bytes', bytes / N / (pass + 1));
}
