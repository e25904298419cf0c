import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (panva's certified `oidc-provider`) on loopback, for single sign-on
 * tests: its development interactions ask for a login (any account id of `accounts`) and a
 * consent, as plain HTML forms. `signIn` drives them as a browser would, without one.
 */
export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Record<string, TestAccount>;
  /** From the provider's authorization URL to the redirect back to the platform: that URL. */
  signIn(authorizationUrl: string, accountId: string): Promise<URL>;
  /** While true, the ID tokens the token endpoint answers carry a broken signature (same length). */
  tamperIdTokens: boolean;
  close(): Promise<void>;
}

export async function startProvider(redirectUri: string): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts: Record<string, TestAccount> = {};
  const clientId = 'workspace-platform';
  const clientSecret = 'a client secret for the tests only';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => (accounts[id] ? { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) } : undefined),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    cookies: { keys: ['cookie key of the test provider'] },
    features: { devInteractions: { enabled: true } },
  } as never);
  // Its warnings about development-only settings are expected here.
  provider.on('server_error', () => undefined);
  const handler = provider.callback();
  const self = { tamperIdTokens: false };
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (self.tamperIdTokens && req.method === 'POST' && req.url?.startsWith('/token')) {
      // One character of the signature changed: the token still parses, its signature is wrong.
      const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => http.ServerResponse;
      res.end = ((chunk?: unknown, ...rest: unknown[]) => {
        const body = Buffer.isBuffer(chunk) ? chunk.toString('utf8') : typeof chunk === 'string' ? chunk : undefined;
        const token = body ? /"id_token":"([^"]+)"/.exec(body)?.[1] : undefined;
        if (body && token) {
          const [head, payload, sig] = token.split('.') as [string, string, string];
          const broken = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
          return end(body.replace(token, `${head}.${payload}.${broken}`), ...rest);
        }
        return end(chunk, ...rest);
      }) as typeof res.end;
    }
    // Koa's callback answers its own errors (ctx.onerror); the promise only says when it is done.
    void handler(req, res);
  });

  async function signIn(authorizationUrl: string, accountId: string): Promise<URL> {
    const jar = new Map<string, string>();
    const send = async (url: URL, form?: Record<string, string>) => {
      const res = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form ? { body: new URLSearchParams(form).toString() } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const pair = line.split(';')[0]!;
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      return res;
    };
    let url = new URL(authorizationUrl);
    let res = await send(url);
    for (let step = 0; step < 20; step++) {
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.get('location')!, url);
        if (next.origin !== issuer) return next;
        url = next;
        res = await send(url);
        continue;
      }
      const page = await res.text();
      const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(page)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
      if (res.status !== 200 || !action || !prompt) throw new Error(`the provider answered ${res.status}: ${page.slice(0, 500)}`);
      url = new URL(action, url);
      res = await send(url, prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt });
    }
    throw new Error('the provider never sent the browser back');
  }

  return Object.assign(self, {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signIn,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
