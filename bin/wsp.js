#!/usr/bin/env -S node --max-semi-space-size=4
// The bundle of dist/cli/main.js and its packages (scripts/bundle.mjs), made by `npm run build`.
// The flag: V8's young generation otherwise grows to 16 MB per semi-space under load, which was
// about 60 MB of a busy server's resident memory for no measurable throughput (docs/benchmarks.md).
import '../dist/wsp.mjs';
