import { after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';

/**
 * The log scan of every test file (issue 9.6: "secrets and tokens never in logs"): the harness
 * captures every line each test app logs (createTestApp) and test/helpers/processes.ts every line
 * a real server writes; the credentials, tokens and secret payloads the tests are given or send
 * are registered here (by the harness, by inject and fetch as they pass, or by a test with
 * `registerSecret`); once the file's tests are over, an `after` hook fails the file if any
 * captured line holds one of them, or a `sk_svc_` token's plaintext.
 */

/** Shorter values are left out: they would match unrelated text (ids, request ids, words). */
const MIN_LENGTH = 12;
/** An API token's plaintext (a prefix of 12 characters may be shown; the whole token never). */
const TOKEN_PLAINTEXT = /sk_svc_[A-Za-z0-9]{24,}/;

const secrets = new Set<string>();
const sources: { name: string; lines: string[] }[] = [];

/** Values that must never reach a log line (short or empty values are ignored). */
export function registerSecret(...values: (string | null | undefined)[]): void {
  for (const v of values) if (typeof v === 'string' && v.length >= MIN_LENGTH) secrets.add(v);
}

/** A secret payload as the API carries it (base64), and its plaintext when that is text. */
export function registerPayload(base64: unknown): void {
  if (typeof base64 !== 'string') return;
  registerSecret(base64);
  const text = Buffer.from(base64, 'base64').toString('utf8');
  if (!text.includes('\ufffd') && /^[\P{Cc}\t\n\r]*$/u.test(text)) registerSecret(text);
}

/** Lines to scan at the end of the file (a real server's output, kept up to date by its owner). */
export function captureLines(name: string, lines: string[]): void {
  sources.push({ name, lines });
}

/** A stream for a logger: each line is kept for the scan, and also written to `forward` if given. */
export function captureStream(name: string, forward?: NodeJS.WritableStream): Writable {
  const lines: string[] = [];
  captureLines(name, lines);
  return new Writable({
    write(chunk, _enc, done) {
      const text = String(chunk);
      for (const line of text.split('\n')) if (line) lines.push(line);
      if (process.env.WSP_TEST_LOG) process.stderr.write(text);
      if (forward) forward.write(chunk, () => done());
      else done();
    },
  });
}

/** Every line captured so far in this file. */
export function capturedLines(): string[] {
  return sources.flatMap((s) => s.lines);
}

/** The registered values still worth looking for (for tests that scan their own lines too). */
export function registeredSecrets(): string[] {
  return [...secrets];
}

/**
 * Which of `values` (each at least MIN_LENGTH long) occur in `text`. Few values: a search of the
 * text per value. Many: one pass over the text, each window of MIN_LENGTH characters looked up
 * among the values' first MIN_LENGTH characters; the search per value is O(values × text), and an
 * hour-long soak (25,000 values, 80 MB of log) spent eight minutes in it.
 */
export function valuesIn(text: string, values: Iterable<string>): string[] {
  const all = [...values];
  if (all.length <= 64) return all.filter((s) => text.includes(s));
  const byPrefix = new Map<string, string[]>();
  for (const s of all) {
    const key = s.slice(0, MIN_LENGTH);
    const same = byPrefix.get(key);
    if (same) same.push(s);
    else byPrefix.set(key, [s]);
  }
  const found = new Set<string>();
  for (let i = 0; i + MIN_LENGTH <= text.length; i++) {
    const candidates = byPrefix.get(text.slice(i, i + MIN_LENGTH));
    if (candidates) for (const s of candidates) if (text.startsWith(s, i)) found.add(s);
  }
  return all.filter((s) => found.has(s));
}

/** Lines holding a registered value or a token's plaintext, each with what it holds. */
export function scanLogs(): string[] {
  const hits: string[] = [];
  for (const { name, lines } of sources) {
    if (lines.length === 0) continue;
    // One pass over the whole text; lines are only looked at when it holds a value.
    const text = lines.join('\n');
    const found = valuesIn(text, secrets);
    if (found.length === 0 && !TOKEN_PLAINTEXT.test(text)) continue;
    for (const line of lines) {
      const inLine = found.filter((s) => line.includes(s));
      const token = TOKEN_PLAINTEXT.exec(line)?.[0];
      if (token && !inLine.includes(token)) inLine.push(token);
      if (inLine.length > 0) hits.push(`${name}: ${inLine.map((s) => JSON.stringify(s.slice(0, 24) + (s.length > 24 ? '...' : ''))).join(', ')} in ${line.slice(0, 300)}`);
    }
  }
  return hits;
}

let installed = false;
/** Installs the end-of-file scan once (the harness and processes.ts call it when loaded). */
export function installLogScan(): void {
  if (installed) return;
  installed = true;
  after(() => {
    const lines = sources.reduce((n, s) => n + s.lines.length, 0);
    const hits = scanLogs();
    assert.deepEqual(hits, [], `the log scan of this file (${lines} lines, ${secrets.size} values) found a credential, token or secret payload`);
  });
}

/** Keys whose string values are credentials wherever they appear in a request or an answer. */
const CREDENTIAL_KEYS = new Set(['token', 'session_token', 'access_token', 'refresh_token', 'id_token', 'device_code', 'api_token', 'password', 'client_secret']);

/** Registers the credentials and payloads a JSON (or form) document carries; `payloads`: also `data` strings. */
export function harvest(value: unknown, payloads: boolean, depth = 0): void {
  if (depth > 4 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value.slice(0, 200)) harvest(v, payloads, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') {
      if (CREDENTIAL_KEYS.has(k)) registerSecret(v);
      else if (payloads && k === 'data') registerPayload(v);
    } else harvest(v, payloads, depth + 1);
  }
}

/** The credential of an Authorization header, when it has a credential's shape (not fuzzed garbage). */
export function harvestAuthorization(header: unknown): void {
  if (typeof header !== 'string') return;
  const m = /^Bearer (\S+)$/i.exec(header);
  if (!m) return;
  const c = m[1]!;
  if (/^sk_svc_[A-Za-z0-9]{30,}$/.test(c) || /^[A-Za-z0-9]{32}$/.test(c) || /^[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*$/.test(c)) registerSecret(c);
}

/** Parses a request or response body for harvest: JSON or a form, else nothing. */
export function parseBody(body: unknown, contentType: unknown): unknown {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'object' && !Buffer.isBuffer(body)) return body;
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
  if (text.length > 4 * 1024 * 1024) return undefined;
  const type = String(contentType ?? '');
  if (type.includes('x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
