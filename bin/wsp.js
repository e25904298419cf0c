#!/usr/bin/env -S node --max-semi-space-size=4 --max-old-space-size=1024
// The bundle of dist/cli/main.js and its packages (scripts/bundle.mjs), made by `npm run build`,
// run with the bytecode a server cached beside it (bin/compiled-bundle.js).
// The flags: V8's young generation otherwise grows to 16 MB per semi-space under load, which was
// about 60 MB of a busy server's resident memory for no measurable throughput; and V8 sizes the
// old generation from the machine's memory (about 4 GB on 24 GB), first collecting it only when
// it reaches a share of that: 1 GB (what a 4 GB machine gets, 25 times the server's live heap
// under the soak) makes it collect before the garbage passes 200 MB of resident memory
// (docs/benchmarks.md, round five). `node --max-old-space-size=N bin/wsp.js` runs it with another.
// They cost the start 50-90 ms: under a V8 flag off its default, Node compiles its built-in
// modules without the code cache it ships with (docs/decisions.md, "The heap flags ... kept").
import { fileURLToPath } from 'node:url';
import { runCompiledBundle } from './compiled-bundle.js';

runCompiledBundle(fileURLToPath(new URL('../dist/wsp.cjs', import.meta.url)), fileURLToPath(new URL('../dist/compile-cache/', import.meta.url)));
