import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { captureLines, harvest, harvestAuthorization, installLogScan, registerSecret } from './log-scan.js';

// Every line a server started here writes is scanned when the test file ends (test/helpers/log-scan.ts).
installLogScan();

/** The installed command, as a user runs it: `bin/wsp.js` (on the built `dist/`; npm test builds first). */
export const WSP_BIN = path.join(REPO_ROOT, 'bin/wsp.js');

if (!fs.existsSync(path.resolve(path.dirname(WSP_BIN), '../dist/cli/main.js'))) {
  throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
}

/** A clean environment: only what the command needs, so nothing of the test run leaks in. */
export function wspEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/wsp.js ...args` to completion (`input` piped to its stdin). */
export function runWsp(args: string[], env: Record<string, string>, timeoutMs = 60_000, input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WSP_BIN, ...args], { env: wspEnv(env), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`wsp ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs an admin command with --json and returns its one JSON object (fails loudly otherwise). */
export async function adminJson(args: string[], env: Record<string, string>): Promise<Record<string, string>> {
  return adminJsonOf(args, await runWsp(['admin', ...args, '--json'], env));
}

/** The one JSON object an admin command printed with --json (its credentials noted for the log scan). */
export function adminJsonOf(args: string[], res: RunResult): Record<string, string> {
  if (res.code !== 0) throw new Error(`wsp admin ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  const lines = res.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${res.stdout}`);
  const out = JSON.parse(lines[0]!) as Record<string, string>;
  harvest(out, false);
  return out;
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Every line the server wrote so far (JSON logs on stdout, anything else on stderr). */
  output: string[];
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** SIGTERM (or another signal), then the exit code; SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
}

/**
 * The command line of `wsp serve` whose compute area runs on a clock moved by the seconds in
 * `offsetFile` (test/helpers/serve-moved-clock.ts), for `startServer`'s `command`.
 */
export function serveWithMovedComputeClock(offsetFile: string): string[] {
  return ['--import', 'tsx', path.join(REPO_ROOT, 'test/helpers/serve-moved-clock.ts'), offsetFile];
}

/** Starts `node bin/wsp.js worker` and waits until it says it started (its `url` is empty: it serves no HTTP). */
export function startWorker(env: Record<string, string>): Promise<ServerProcess> {
  return startServer(env, [], [WSP_BIN, 'worker'], 'worker started');
}

/** Starts `node bin/wsp.js serve` on a free port of 127.0.0.1 and waits until it listens (or logs `ready`). */
export async function startServer(env: Record<string, string>, args: string[] = [], command: string[] = [WSP_BIN, 'serve'], ready = 'listening'): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...command, ...args], {
    env: wspEnv({ PORT: '0', HOST: '127.0.0.1', WSP_LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  captureLines(`wsp serve ${args.join(' ')}`.trim(), output);
  registerSecret(env.WSP_MASTER_KEY, env.WSP_PROVIDER_TOKEN);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that never said it listens must not outlive the test (it would keep it running).
      child.kill('SIGKILL');
      reject(new Error(`the server did not start:\n${output.join('\n')}`));
    }, 60_000);
    const onLine = (line: string) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === ready && (entry.address || ready !== 'listening')) {
          clearTimeout(timer);
          resolve(entry.address ?? '');
        }
      } catch {
        // not a log line
      }
    };
    const buf = { out: '', err: '' };
    const feed = (which: 'out' | 'err') => (d: Buffer) => {
      buf[which] += d.toString();
      const parts = buf[which].split('\n');
      buf[which] = parts.pop() ?? '';
      parts.filter(Boolean).forEach(onLine);
    };
    child.stdout.on('data', feed('out'));
    child.stderr.on('data', feed('err'));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    child,
    output,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export interface ApiOptions {
  credential?: string;
  workspaceId?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Default true: a 503 with Retry-After (the database not reached in time, as a process starved
   * of CPU by other work can be) is waited out and the request sent again, at most
   * `API_RETRIES` times, as the SDK's transport does (packages/sdk/src/transport.ts): only a
   * request that is safe to repeat, a GET, HEAD or OPTIONS or a write with an Idempotency-Key; a
   * POST without one is given one, as the SDK gives it. false: sent once as given and answered
   * as it came, a 503 included (the fault tests, which count the answers a fault gets).
   */
  retry?: boolean;
  /** false: a POST without an Idempotency-Key is sent without one (and so is not retried). */
  idempotencyKey?: boolean;
}

/** How many times `api` sends a request again after a 503 with Retry-After (the SDK's default is 2). */
export const API_RETRIES = 3;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** fetch with a bearer credential and an optional Service-Context; JSON in and out; a 503 with Retry-After retried (ApiOptions.retry). */
export async function api(base: string, method: string, url: string, opts: ApiOptions = {}): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.credential) headers.authorization = `Bearer ${opts.credential}`;
  if (opts.workspaceId) headers['service-context'] = opts.workspaceId;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const retry = opts.retry !== false;
  const hasKey = Object.keys(headers).some((k) => k.toLowerCase() === 'idempotency-key');
  if (retry && method === 'POST' && !hasKey && opts.idempotencyKey !== false) headers['idempotency-key'] = randomUUID();
  const repeatable = retry && (SAFE_METHODS.has(method) || 'idempotency-key' in headers || hasKey);
  harvestAuthorization(headers.authorization);
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(base + url, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    const text = await res.text();
    const retryAfter = res.headers.get('retry-after');
    if (res.status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter) && repeatable && attempt < API_RETRIES) {
      await sleep(Math.min(30, Number(retryAfter)) * 1000);
      continue;
    }
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    // What was accepted or answered: credentials, and secret payloads.
    if (res.ok) {
      harvest(opts.body, true);
      harvest(body, true);
    }
    return { status: res.status, headers: res.headers, body, text };
  }
}
