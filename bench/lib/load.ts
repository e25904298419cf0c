import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  /** Answers with a 2xx status. */
  ok: number;
  p50: number;
  p99: number;
  /** Answers whose status was not `expectStatus` (the name is older than the 304 scenario). */
  non2xx: number;
  /** Socket errors: connect, read, write, timeout. */
  errors: number;
}

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationSeconds: number;
  /** The status every answer must have; anything else counts as an error of the run. */
  expectStatus: number;
  /**
   * Headers whose value must differ per request (an Idempotency-Key): names, not a function,
   * because wrk builds its requests in Lua and cannot call back into this process. Each request
   * gets a value no other request of any run has.
   */
  uniqueHeaders?: string[];
}

export type Client = 'wrk' | 'autocannon';

/**
 * wrk where installed: written in C with one event loop per thread, it takes less of the two
 * cores the servers share than autocannon, which runs on this process's own event loop (and so
 * also competes with the bench's own fetches). autocannon otherwise (an npm dependency, always there).
 */
let client: Client = findWrk() ? 'wrk' : 'autocannon';

export function selectClient(forced?: string): Client {
  if (forced === undefined) return client;
  if (forced !== 'wrk' && forced !== 'autocannon') throw new Error(`--client: wrk or autocannon, not ${forced}`);
  if (forced === 'wrk' && !findWrk()) throw new Error('--client wrk: no wrk on PATH');
  return (client = forced);
}

function findWrk(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, 'wrk');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** The client for the table's header line: which, its version, how it runs. */
export function describeClient(): string {
  if (client === 'autocannon') return 'autocannon (in the bench process)';
  const v = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  const version = /wrk (\S+)/.exec(`${v.stdout}${v.stderr}`)?.[1] ?? '';
  return `wrk ${version} (${WRK_THREADS} thread${WRK_THREADS === 1 ? '' : 's'}, --timeout 10s, statuses checked in Lua)`;
}

/** A value for a unique header: this process, a random run prefix, a counter. */
let uniqueSeq = 0;
const uniquePrefix = `${process.pid}-${randomBytes(4).toString('hex')}`;
export const uniqueValue = (): string => `bench-${uniquePrefix}-${uniqueSeq++}`;

export async function load(spec: LoadSpec): Promise<LoadResult> {
  return client === 'wrk' ? loadWrk(spec) : loadAutocannon(spec);
}

async function loadAutocannon(spec: LoadSpec): Promise<LoadResult> {
  let wrongStatus = 0;
  const unique = spec.uniqueHeaders ?? [];
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    connections: spec.connections,
    duration: spec.durationSeconds,
    ...(unique.length
      ? { requests: [{ setupRequest: (req: { headers: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...Object.fromEntries(unique.map((h) => [h, uniqueValue()])) } }) }] }
      : {}),
    // Checking every response's status keeps a broken setup from looking fast.
    setupClient: (client: { on(event: string, cb: (status: number) => void): void }) => {
      client.on('headers', ((h: { statusCode: number }) => {
        if (h.statusCode !== spec.expectStatus) wrongStatus++;
      }) as never);
    },
  });
  const r = result as unknown as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; errors: number; timeouts: number; '2xx': number };
  const none = r.requests.total === 0;
  return { rps: r.requests.average, ok: r['2xx'], p50: none ? NaN : r.latency.p50, p99: none ? NaN : r.latency.p99, non2xx: wrongStatus, errors: r.errors + r.timeouts };
}

/**
 * wrk threads: one. Measured on the 2-core machine against the ceiling server at 32
 * connections, alternating `-t 1` and `-t 2` (wrk's CPU time from /usr/bin/time over its
 * requests): 22-31 µs of CPU per request either way, so a second thread buys no efficiency;
 * what it does buy is a second runnable thread competing with the server for the two cores
 * (more throughput for wrk when the machine is contended, taken from the server). One thread
 * cannot take more than one core, at ~25 µs a request half a core at 20,000 req/s.
 * WSP_BENCH_WRK_THREADS overrides it, to repeat that comparison. Never more threads than
 * connections (wrk refuses that).
 */
const WRK_THREADS = Number(process.env.WSP_BENCH_WRK_THREADS ?? 1);

/** A Lua string literal of any bytes (decimal escapes, three digits so a digit after one is not swallowed). */
const luaString = (s: string) =>
  '"' + [...Buffer.from(s, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`)).join('') + '"';

/**
 * The script wrk runs. Each wrk thread has its own Lua state, and setup() and done() run in yet
 * another: the counters are globals of each thread's state, set up by setup() keeping a table
 * of the threads, and summed in done() with thread:get(). Without unique headers no request()
 * is defined, so wrk builds the request once and sends the same bytes (its fast path).
 */
function wrkScript(spec: LoadSpec): string {
  const unique = spec.uniqueHeaders ?? [];
  const lines = [
    `wrk.method = ${luaString(spec.method)}`,
    ...(spec.body !== undefined ? [`wrk.body = ${luaString(spec.body)}`] : []),
    ...Object.entries(spec.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
    `local expect = ${spec.expectStatus}`,
    'mismatched = 0',
    'ok = 0',
    'local threads = {}',
    'function setup(thread)',
    '  table.insert(threads, thread)',
    '  thread:set("tid", #threads)',
    'end',
  ];
  if (unique.length) {
    // This process's prefix (random per run), the thread, a counter: unique across threads,
    // runs and the sample request the runner sent with uniqueValue().
    lines.push(
      `local prefix = ${luaString(`bench-${uniquePrefix}-wrk${uniqueSeq++}`)}`,
      'local n = 0',
      'function request()',
      '  n = n + 1',
      '  local value = prefix .. "-" .. tid .. "-" .. n',
      ...unique.map((h) => `  wrk.headers[${luaString(h)}] = value`),
      '  return wrk.format()',
      'end',
    );
  }
  lines.push(
    // Checking every response's status keeps a broken setup from looking fast. (Defining
    // response() makes wrk hand each answer's headers and body to Lua: a cost on the client's
    // side, paid alike by every server measured.)
    'function response(status, headers, body)',
    '  if status ~= expect then mismatched = mismatched + 1 end',
    '  if status >= 200 and status < 300 then ok = ok + 1 end',
    'end',
    'function done(summary, latency, requests)',
    '  local bad, good = 0, 0',
    '  for _, t in ipairs(threads) do',
    '    bad = bad + (t:get("mismatched") or 0)',
    '    good = good + (t:get("ok") or 0)',
    '  end',
    '  local e = summary.errors',
    '  io.write(string.format("\\nWSP_LOAD_RESULT {\\"requests\\":%.0f,\\"duration_us\\":%.0f,\\"p50_us\\":%.0f,\\"p99_us\\":%.0f,\\"ok\\":%.0f,\\"mismatched\\":%.0f,\\"connect\\":%.0f,\\"read\\":%.0f,\\"write\\":%.0f,\\"timeout\\":%.0f}\\n",',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), good, bad, e.connect, e.read, e.write, e.timeout))',
    'end',
  );
  return lines.join('\n') + '\n';
}

async function loadWrk(spec: LoadSpec): Promise<LoadResult> {
  const script = path.join(os.tmpdir(), `wsp-bench-wrk-${process.pid}-${randomBytes(4).toString('hex')}.lua`);
  fs.writeFileSync(script, wrkScript(spec));
  const threads = Math.max(1, Math.min(WRK_THREADS, spec.connections));
  // wrk takes whole seconds; a fraction would be read as its integer part.
  const seconds = Math.max(1, Math.round(spec.durationSeconds));
  const args = ['-t', String(threads), '-c', String(spec.connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', script, spec.url];
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += String(d)));
      child.stderr.on('data', (d) => (stderr += String(d)));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    const line = /^WSP_LOAD_RESULT (.*)$/m.exec(stdout);
    if (code !== 0 || !line) throw new Error(`wrk ${args.join(' ')}: exit ${code}\n${stdout}\n${stderr}`);
    const r = JSON.parse(line[1]!) as Record<'requests' | 'duration_us' | 'p50_us' | 'p99_us' | 'ok' | 'mismatched' | 'connect' | 'read' | 'write' | 'timeout', number>;
    return {
      rps: r.requests / (r.duration_us / 1e6),
      ok: r.ok,
      // No answer within the duration (a restore slower than a short run): no latency, not 0 ms.
      p50: r.requests === 0 ? NaN : r.p50_us / 1000,
      p99: r.requests === 0 ? NaN : r.p99_us / 1000,
      non2xx: r.mismatched,
      errors: r.connect + r.read + r.write + r.timeout,
    };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

/** Of the finite values (a run with no answer has no latency); NaN when there is none. */
export function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The largest finite value (a run with no answer has no latency); NaN when there is none. */
export function maxFinite(xs: number[]): number {
  const s = xs.filter(Number.isFinite);
  return s.length ? Math.max(...s) : NaN;
}
