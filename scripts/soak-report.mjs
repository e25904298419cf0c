#!/usr/bin/env node
// What grew during a soak: reads the server log a soak kept (WSP_SOAK_LOG_DIR, test/faults/soak.test.ts)
// and prints, per route, the requests' mean and p99 time in the first and the last quarter of the
// run, the routes whose time grew most first. A route alone growing is that route's query; every
// route growing alike is something else holding the event loop.
// Usage: node scripts/soak-report.mjs DIR [engine]
import fs from 'node:fs';
import path from 'node:path';

const [dir, engine = 'sqlite'] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node scripts/soak-report.mjs DIR [sqlite|postgres]');
  process.exit(2);
}
const lines = fs.readFileSync(path.join(dir, `server-${engine}.log`), 'utf8').split('\n');
const requests = [];
for (const line of lines) {
  if (!line.startsWith('{')) continue;
  let e;
  try {
    e = JSON.parse(line);
  } catch {
    continue;
  }
  if (e.msg === 'request' && typeof e.ms === 'number') requests.push({ t: e.time, route: `${e.method} ${e.route}`, ms: e.ms });
}
if (requests.length === 0) {
  console.error('no request lines in the log');
  process.exit(1);
}
const t0 = requests[0].t;
const t1 = requests.at(-1).t;
const quarter = (t1 - t0) / 4;
const stats = (xs) => {
  if (xs.length === 0) return { n: 0, mean: NaN, p99: NaN };
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length, p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] };
};
const byRoute = new Map();
for (const r of requests) {
  const slot = r.t < t0 + quarter ? 'first' : r.t >= t1 - quarter ? 'last' : null;
  if (!slot) continue;
  const entry = byRoute.get(r.route) ?? { first: [], last: [] };
  entry[slot].push(r.ms);
  byRoute.set(r.route, entry);
}
const rows = [...byRoute].map(([route, e]) => ({ route, first: stats(e.first), last: stats(e.last) }));
rows.sort((a, b) => (b.last.mean - b.first.mean || 0) - (a.last.mean - a.first.mean || 0));
const f = (n) => (Number.isFinite(n) ? n.toFixed(1).padStart(8) : '       -');
console.log(`${requests.length} requests over ${((t1 - t0) / 60000).toFixed(1)} min; first vs last quarter (ms)`);
console.log(`${'route'.padEnd(64)}   n1     mean1     p99_1   n2     mean2     p99_2`);
for (const r of rows) {
  console.log(`${r.route.slice(0, 64).padEnd(64)} ${String(r.first.n).padStart(5)} ${f(r.first.mean)} ${f(r.first.p99)} ${String(r.last.n).padStart(5)} ${f(r.last.mean)} ${f(r.last.p99)}`);
}
const all = { first: stats(requests.filter((r) => r.t < t0 + quarter).map((r) => r.ms)), last: stats(requests.filter((r) => r.t >= t1 - quarter).map((r) => r.ms)) };
console.log(`all: mean ${all.first.mean.toFixed(1)} -> ${all.last.mean.toFixed(1)} ms, p99 ${all.first.p99.toFixed(1)} -> ${all.last.p99.toFixed(1)} ms`);
