// Preloaded (`node --require`) into the project's server by the bench (bench/event-loop.ts): the
// event loop's delay read at a 1 ms resolution, beside prom-client's 10 ms one. Node's
// monitorEventLoopDelay records the time between two runs of a repeating timer (src/histogram.cc,
// Histogram::RecordDelta), so each value is the interval plus how late the timer ran: at 10 ms a
// value says little of a delay under 10 ms, and an idle loop reads 10-11. Here each value is 1 ms
// plus the delay, so p99 - 1 ms is the delay proper to within libuv's millisecond clock.
// SIGUSR2 writes what was recorded since the last one to BENCH_LOOP_PROBE_FILE and starts anew.
'use strict';
const fs = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const RESOLUTION_MS = 1;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();
process.on('SIGUSR2', () => {
  const ms = (ns) => ns / 1e6;
  const reading = { resolutionMs: RESOLUTION_MS, count: histogram.count, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
  histogram.reset();
  const file = process.env.BENCH_LOOP_PROBE_FILE;
  // Written whole then renamed: the bench never reads half a file.
  if (file) {
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(reading));
    fs.renameSync(`${file}.tmp`, file);
  }
});
