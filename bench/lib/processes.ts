import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** A process the bench started: a server, or `wsp worker`. */
export interface Proc {
  pid: number;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

export interface Server extends Proc {
  url: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

function readHwmMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/** Starts a server process and waits until `readyPath` answers 200, asking every `pollMs`. */
export async function startServer(args: string[], env: Record<string, string>, port: number, readyPath = '/healthz', pollMs = 50): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    // BENCH_STDOUT_DIR=dir keeps each server's output in dir/<port>.out: what `--trace-gc-nvp`
    // prints there (docs/benchmarks.md, round eleven).
    stdio: ['ignore', process.env.BENCH_STDOUT_DIR ? fs.openSync(`${process.env.BENCH_STDOUT_DIR}/${port}.out`, 'w') : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    try {
      const res = await fetch(url + readyPath);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 20_000) throw new Error(`server not ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return { url, ...handle(child) };
}

function handle(child: ChildProcess): Proc {
  return {
    pid: child.pid!,
    peakRssMb: () => readHwmMb(child.pid!),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * Starts `wsp worker` (no HTTP to ask) and waits for its log line `worker started`: its database
 * migrated and its runner claiming. Its log is read to that line, then drained unread.
 */
export async function startWorker(args: string[], env: Record<string, string>): Promise<Proc> {
  const child: ChildProcess = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`worker not started: ${stderr}`)), 20_000);
    const onData = (d: Buffer) => {
      out += String(d);
      if (!out.includes('"worker started"')) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve();
    };
    child.stdout?.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`worker exited: ${stderr}`));
    });
  });
  return handle(child);
}

/**
 * Milliseconds from spawn until the server answers: `wsp serve` start-up time, the median of
 * `times` start-ups, each asked every 5 ms (at the 50 ms of startServer's polling, the figure
 * was up to 50 ms late, by chance).
 */
export async function timeToReady(args: string[], env: Record<string, string>, times = 5): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const port = await freePort();
    const t0 = performance.now();
    const s = await startServer(args, env, port, '/healthz', 5);
    ms.push(performance.now() - t0);
    await s.stop();
  }
  return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
}

/**
 * How `wsp` runs when executed: node with the flags of bin/wsp.js's first line (`#!/usr/bin/env -S
 * node ...`), then the script. The bench measures the server as an operator starts it.
 */
export function wspCommand(root: string): string[] {
  const bin = path.join(root, 'bin/wsp.js');
  const shebang = fs.readFileSync(bin, 'utf8').split('\n', 1)[0] ?? '';
  const flags = shebang.replace(/^#!.*?\bnode\b/, '').trim();
  return [...(flags ? flags.split(/\s+/) : []), bin];
}
