/**
 * The event loop's delay under a scenario's load (issue 54, target 5), read two ways in the same
 * runs. prom-client's nodejs_eventloop_lag_p99_seconds (the old figure, kept for comparison with
 * earlier rounds) comes from a monitorEventLoopDelay histogram sampled every 10 ms, and Node records
 * the time between samples, not their delay (src/histogram.cc, Histogram::RecordDelta): each
 * value is 10 ms plus how late the sample ran, so an idle loop reads ~11 and the figure minus 10 is
 * the delay beyond the interval. The probe (bench/lib/loop-delay-probe.cjs, preloaded into the
 * project's server) samples every 1 ms: its p99 minus 1 ms is the delay a timer or an arriving
 * request waits for the loop, to within libuv's millisecond clock.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from './lib/processes.js';

const probeScript = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib/loop-delay-probe.cjs');

export interface ProbeReading {
  resolutionMs: number;
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** The node arguments and environment that preload the probe into a server, and where it answers. */
export function loopProbe(): { args: string[]; env: Record<string, string>; file: string } {
  const file = path.join(os.tmpdir(), `wsp-bench-loop-${process.pid}.json`);
  return { args: ['--require', probeScript], env: { BENCH_LOOP_PROBE_FILE: file }, file };
}

/** What the probe recorded since its last reading (and a new start): it answers SIGUSR2 on its loop. */
export async function readProbe(server: Server, file: string): Promise<ProbeReading> {
  fs.rmSync(file, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 400; i++) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as ProbeReading;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  throw new Error('the event-loop probe did not answer SIGUSR2 within 2 s');
}

/** prom-client's p99 in ms, from the project's /metrics (it resets its histogram on each scrape). */
export async function promLagP99(server: Server): Promise<number> {
  const text = await (await fetch(server.url + '/metrics')).text();
  const m = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
  if (!m) throw new Error('/metrics has no nodejs_eventloop_lag_p99_seconds (process metrics off?)');
  return Number(m[1]) * 1000;
}

/** prom-client's sampling interval (its default eventLoopMonitoringPrecision, which the server keeps). */
export const PROM_INTERVAL_MS = 10;

/** Both readings around each measured run, and one of an idle second, made into the table's two rows. */
export class LoopDelay {
  private readonly prom: number[] = [];
  private readonly probe: ProbeReading[] = [];
  private idle: { prom: number; probe: ProbeReading } | null = null;

  constructor(
    private readonly server: Server,
    private readonly file: string,
  ) {}

  /** Empties both histograms: what follows is read alone. */
  async start(): Promise<void> {
    await promLagP99(this.server);
    await readProbe(this.server, this.file);
  }

  async stop(): Promise<void> {
    this.prom.push(await promLagP99(this.server));
    this.probe.push(await readProbe(this.server, this.file));
  }

  async measureIdle(ms = 1000): Promise<void> {
    await this.start();
    await new Promise((r) => setTimeout(r, ms));
    this.idle = { prom: await promLagP99(this.server), probe: await readProbe(this.server, this.file) };
  }

  /** The old row (prom-client's figure, its delay beyond the interval in the note) and the probe's. */
  rows(engine: string, name: string, median: (xs: number[]) => number) {
    const f = (x: number) => x.toFixed(1);
    const beyond = this.prom.map((p) => p - PROM_INTERVAL_MS);
    const probeDelay = this.probe.map((r) => r.p99 - r.resolutionMs);
    const base = { engine, variant: 'project' as const, rps: NaN, p50: NaN, rssMb: NaN, errors: 0 };
    return [
      {
        ...base,
        scenario: name,
        p99: median(this.prom),
        note: `prom-client's nodejs_eventloop_lag_p99_seconds over each measured run (runs: ${this.prom.map(f).join(', ')}); sampled every ${PROM_INTERVAL_MS} ms, which it counts in: idle ${this.idle ? f(this.idle.prom) : '?'}; beyond the interval: ${f(median(beyond))}`,
      },
      {
        ...base,
        scenario: `${name.replace(/, ms$/, '')}, beyond a 1 ms probe's interval, ms`,
        p50: median(this.probe.map((r) => r.p50 - r.resolutionMs)),
        p99: median(probeDelay),
        note: `monitorEventLoopDelay({ resolution: 1 }) preloaded (bench/lib/loop-delay-probe.cjs), p99 minus 1 ms (runs: ${probeDelay.map(f).join(', ')}; max ${f(Math.max(...this.probe.map((r) => r.max)))}; ${this.probe.map((r) => r.count).join(', ')} samples); idle ${this.idle ? f(this.idle.probe.p99 - this.idle.probe.resolutionMs) : '?'}`,
      },
    ];
  }
}
