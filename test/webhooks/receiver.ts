import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Whether the standardwebhooks package (a verifier written elsewhere) accepted it. */
  verified: boolean;
  headers: http.IncomingHttpHeaders;
}

/**
 * A real webhook receiver on 127.0.0.1 that checks every request with the `standardwebhooks`
 * package. `answer` decides each response (default 204); it may also hang or redirect, or give a
 * status with its own headers and body.
 */
export type Answer = number | 'hang' | 'redirect' | 'stream' | { status: number; headers?: Record<string, string>; body?: string | Buffer };
export async function startReceiver(secret: () => string | undefined, answer: (r: Received, n: number) => Answer = () => 204) {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const h = req.headers;
      let verified = false;
      const s = secret();
      if (s) {
        try {
          new Webhook(s).verify(body, { 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) });
          verified = true;
        } catch {
          verified = false;
        }
      }
      const r: Received = { id: String(h['webhook-id']), timestamp: String(h['webhook-timestamp']), signature: String(h['webhook-signature']), body, verified, headers: h };
      received.push(r);
      const a = answer(r, received.length);
      if (a === 'hang') return void hanging.push(res);
      if (a === 'redirect') return void res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      if (a === 'stream') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => res.write('.'), 20);
        res.on('close', () => clearInterval(t));
        hanging.push(res);
        return;
      }
      if (typeof a === 'object') return void res.writeHead(a.status, a.headers ?? {}).end(a.body ?? '');
      res.writeHead(a).end(a >= 400 ? 'receiver says no' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
