import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { guardedLookup, isPrivateAddress, type AddressPolicy } from './address-policy.js';

/** docs/spec-gaps.md, "Webhooks": a 2xx within this time is a success; anything else is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What of a failing receiver's answer goes into the attempt's `error` (and the delivery's `last_error`). */
const ERROR_BODY_BYTES = 512;
/** What is kept of each answer's body for the attempt's record (docs/spec-gaps.md, "Webhooks"). */
export const RESPONSE_BODY_BYTES = 4096;
/** What is kept of each answer's headers: the first ones, each value cut to a bound. */
export const RESPONSE_HEADERS_MAX = 50;
export const RESPONSE_HEADER_VALUE_CHARS = 1024;

/** The Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** What came back, as far as it is kept. */
export interface AttemptResponse {
  headers: [string, string][];
  headersTruncated: boolean;
  /** The first RESPONSE_BODY_BYTES as UTF-8 text (a character cut at the end, or bytes that are not UTF-8, become U+FFFD). */
  body: string;
  bodyTruncated: boolean;
}

export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** The headers sent, in order: the attempt's record (src/webhooks/delivery-job.ts). */
  requestHeaders: [string, string][];
  /** Null when there was no whole HTTP answer (`status` is null too). */
  response: AttemptResponse | null;
  /** From the attempt's start to its outcome, by the process's monotonic clock. */
  durationMs: number;
}

/** Text either engine stores: PostgreSQL's text refuses NUL, which a receiver's body or headers may hold. */
const storable = (text: string) => text.replace(/\u0000/g, '\uFFFD');

function keptHeaders(raw: string[]): { headers: [string, string][]; truncated: boolean } {
  const headers: [string, string][] = [];
  let truncated = raw.length / 2 > RESPONSE_HEADERS_MAX;
  for (let i = 0; i + 1 < raw.length && headers.length < RESPONSE_HEADERS_MAX; i += 2) {
    const value = raw[i + 1]!;
    if (value.length > RESPONSE_HEADER_VALUE_CHARS) truncated = true;
    headers.push([storable(raw[i]!), storable(value.slice(0, RESPONSE_HEADER_VALUE_CHARS))]);
  }
  return { headers, truncated };
}

/**
 * POSTs one delivery. No redirect is followed (a 3xx is a failure), no credential of ours is
 * sent, the connection goes only to addresses the policy allows (checked when connecting), and
 * the whole attempt, a receiver that streams forever included, ends after the timeout. The
 * outcome carries what the attempt's record keeps: the headers sent, and the answer's status,
 * headers and the start of its body (bounded above).
 */
export function deliver(url: string, msg: { id: string; timestamp: number; body: string; secret: string }, policy: AddressPolicy, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<AttemptOutcome> {
  const started = performance.now();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'workspace-platform-webhooks/1',
    'webhook-id': msg.id,
    'webhook-timestamp': String(msg.timestamp),
    'webhook-signature': signature(msg.secret, msg.id, msg.timestamp, msg.body),
    'content-length': String(Buffer.byteLength(msg.body)),
  };
  const requestHeaders = Object.entries(headers);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (o: Pick<AttemptOutcome, 'ok' | 'status' | 'error'> & { response?: AttemptResponse }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...o, error: o.error === null ? null : storable(o.error), requestHeaders, response: o.response ?? null, durationMs: Math.round(performance.now() - started) });
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !policy.allowPrivate && isPrivateAddress(host)) return finish({ ok: false, status: null, error: `${host} is a private or loopback address` });
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, { method: 'POST', agent: false, lookup: guardedLookup(policy), headers });
    timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    req.on('error', (err) => finish({ ok: false, status: null, error: err.message.slice(0, 300) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (c: Buffer) => {
        if (received < RESPONSE_BODY_BYTES) chunks.push(c.subarray(0, RESPONSE_BODY_BYTES - received));
        received += c.length;
      });
      res.on('error', () => {});
      res.on('end', () => {
        const ok = status >= 200 && status < 300;
        const kept = Buffer.concat(chunks);
        const text = kept.subarray(0, ERROR_BODY_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
        const why = status >= 300 && status < 400 ? `answered ${status} (redirects are not followed)` : `answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
        const { headers: answered, truncated } = keptHeaders(res.rawHeaders);
        finish({
          ok,
          status,
          error: ok ? null : why,
          response: { headers: answered, headersTruncated: truncated, body: storable(kept.toString('utf8')), bodyTruncated: received > RESPONSE_BODY_BYTES },
        });
        req.destroy();
      });
    });
    req.end(msg.body);
  });
}
