import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { createHmac } from 'node:crypto';
import { guardedLookup, isPrivateAddress, type AddressPolicy } from './address-policy.js';

/** docs/spec-gaps.md, "Webhooks": a 2xx within this time is a success; anything else is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is kept of a failing receiver's answer, for the delivery log. */
const ERROR_BODY_BYTES = 512;

/** The Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/**
 * POSTs one delivery. No redirect is followed (a 3xx is a failure), no credential of ours is
 * sent, the connection goes only to addresses the policy allows (checked when connecting), and
 * the whole attempt, a receiver that streams forever included, ends after the timeout.
 */
export function deliver(url: string, msg: { id: string; timestamp: number; body: string; secret: string }, policy: AddressPolicy, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (o: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !policy.allowPrivate && isPrivateAddress(host)) return finish({ ok: false, status: null, error: `${host} is a private or loopback address` });
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(policy),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'workspace-platform-webhooks/1',
        'webhook-id': msg.id,
        'webhook-timestamp': String(msg.timestamp),
        'webhook-signature': signature(msg.secret, msg.id, msg.timestamp, msg.body),
        'content-length': Buffer.byteLength(msg.body),
      },
    });
    timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    req.on('error', (err) => finish({ ok: false, status: null, error: err.message.slice(0, 300) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        if (kept < ERROR_BODY_BYTES) {
          chunks.push(c.subarray(0, ERROR_BODY_BYTES - kept));
          kept += c.length;
        }
      });
      res.on('error', () => {});
      res.on('end', () => {
        const ok = status >= 200 && status < 300;
        const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
        const why = status >= 300 && status < 400 ? `answered ${status} (redirects are not followed)` : `answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
        finish({ ok, status, error: ok ? null : why });
        req.destroy();
      });
    });
    req.end(msg.body);
  });
}
