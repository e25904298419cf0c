#!/usr/bin/env node
// Compares two V8 heap snapshots (the soak's, WSP_SOAK_HEAP_SNAPSHOTS=1): the objects of each
// kind (type and constructor or name) in each, their count and self size, and the kinds that
// grew most. Enough to tell a bounded cache filling (a few kinds, growth that a longer run does
// not repeat) from a leak (request-shaped objects piling up).
//   node --max-old-space-size=8000 scripts/heap-diff.mjs A.heapsnapshot B.heapsnapshot [top]
// Then, for the objects of B that A did not have (ids are kept across one process's snapshots):
// what holds them, by the holder's kind and the edge's name (a cache names itself there).
// By hand: the snapshot format is a flat array described by its own meta (no maintained package
// of the stack reads it; Chrome's DevTools does, and is not on a headless server).
import fs from 'node:fs';

function summarize(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { ...tally(snap), snap };
}

function tally(snap) {
  const meta = snap.snapshot.meta;
  const fields = meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = meta.node_types[typeAt];
  const nodes = snap.nodes;
  const strings = snap.strings;
  const kinds = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const size = nodes[i + sizeAt];
    total += size;
    // Strings by their kind only (their text is the name): one row each for all of them.
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : strings[nodes[i + nameAt]].slice(0, 80);
    const key = `${type} ${name}`;
    const k = kinds.get(key) ?? { count: 0, size: 0 };
    k.count += 1;
    k.size += size;
    kinds.set(key, k);
  }
  return { kinds, total, count: nodes.length / width };
}

/** Objects of `after` whose id `before` lacks, grouped by what holds them (holder kind, edge name). */
function newObjectHolders(before, after, top) {
  const idsOf = (snap) => {
    const f = snap.snapshot.meta.node_fields;
    const ids = new Set();
    for (let i = f.indexOf('id'); i < snap.nodes.length; i += f.length) ids.add(snap.nodes[i]);
    return ids;
  };
  const old = idsOf(before);
  const meta = after.snapshot.meta;
  const nf = meta.node_fields;
  const width = nf.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => nf.indexOf(f));
  const types = meta.node_types[typeAt];
  const ef = meta.edge_fields;
  const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  const eTypes = meta.edge_types[eTypeAt];
  const { nodes, edges, strings } = after;
  const kindOf = (i) => {
    const type = types[nodes[i + typeAt]];
    return type.includes('string') ? type : `${type} ${strings[nodes[i + nameAt]].slice(0, 60)}`;
  };
  const holders = new Map();
  let e = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const count = nodes[i + edgeCountAt];
    const holderNew = !old.has(nodes[i + idAt]);
    for (let k = 0; k < count; k++, e += ef.length) {
      const edgeType = eTypes[edges[e + eTypeAt]];
      if (edgeType === 'weak' || edgeType === 'shortcut') continue;
      const to = edges[e + eToAt];
      if (old.has(nodes[to + idAt])) continue;
      // New objects held by new objects are counted at the first old holder only through their kinds.
      const edgeName = edgeType === 'element' || edgeType === 'hidden' ? `[${edgeType}]` : String(strings[edges[e + eNameAt]]).slice(0, 40);
      const key = `${holderNew ? 'new' : 'OLD'} ${kindOf(i)} --${edgeName}--> ${kindOf(to)}`;
      const h = holders.get(key) ?? { count: 0, size: 0 };
      h.count += 1;
      h.size += nodes[to + sizeAt];
      holders.set(key, h);
    }
  }
  console.log('\nnew objects by what holds them (OLD: a holder that was already there at the first snapshot)');
  for (const [key, h] of [...holders].sort((x, y) => y[1].size - x[1].size).slice(0, top)) console.log(`${(h.size / 1024 / 1024).toFixed(2).padStart(8)} MB ${String(h.count).padStart(8)}  ${key}`);
}

const [a, b, topArg] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const before = summarize(a);
const after = summarize(b);
const mb = (n) => (n / 1024 / 1024).toFixed(2);
console.log(`before: ${before.count} objects, ${mb(before.total)} MB; after: ${after.count} objects, ${mb(after.total)} MB; grew ${mb(after.total - before.total)} MB`);
const rows = [...new Set([...before.kinds.keys(), ...after.kinds.keys()])].map((key) => {
  const x = before.kinds.get(key) ?? { count: 0, size: 0 };
  const y = after.kinds.get(key) ?? { count: 0, size: 0 };
  return { key, count: y.count - x.count, size: y.size - x.size, before: x, after: y };
});
const show = (title, list) => {
  console.log(`\n${title}`);
  for (const r of list) console.log(`${mb(r.size).padStart(8)} MB ${String(r.count).padStart(9)} objects  ${r.key}  (${r.before.count} -> ${r.after.count})`);
};
show('grew most in size', [...rows].sort((x, y) => y.size - x.size).slice(0, top));
show('grew most in count', [...rows].sort((x, y) => y.count - x.count).slice(0, top));
show('shrank most in size', [...rows].sort((x, y) => x.size - y.size).slice(0, Math.ceil(top / 3)));
newObjectHolders(before.snap, after.snap, top);
