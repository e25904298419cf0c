import { timingSafeEqual } from 'node:crypto';

/** The browser session's cookie (docs/spec-gaps.md, "Accounts and sign-in"). */
export const SESSION_COOKIE = 'wsp_session';

/**
 * The value of the cookie `name` in a Cookie header, or undefined. Written by hand: one name in a
 * header of `name=value` pairs is all the platform reads, and a parser library would decode
 * values the platform never sets.
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie value the platform sends: always HttpOnly and SameSite=Lax, Secure when the server's public URL is https. */
export function cookieHeader(name: string, value: string, opts: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  return `${name}=${value}; Path=${opts.path}; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}${opts.secure ? '; Secure' : ''}`;
}

/** The session cookie: HttpOnly, SameSite=Lax, Path=/, Secure when the server's public URL is https. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return cookieHeader(SESSION_COOKIE, token, { path: '/', maxAgeSeconds, secure });
}

/** Tells the browser to forget the session cookie. */
export const clearedSessionCookie = (secure: boolean) => sessionCookie('', 0, secure);

/** Equal strings, compared in a time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a browser says this request comes from another site. `Sec-Fetch-Site` decides when sent
 * (every current browser sends it, and no page can set it): anything but `same-origin` or `none`
 * (typed or bookmarked) is another site. Without it, an `Origin` other than the server's own (the
 * origin of WSP_PUBLIC_URL), `null` included. A page that asks for no referrer (the `/device`
 * page does) makes Chromium send `Origin: null` even to its own site, which is why the fetch
 * metadata comes first. A client that sends neither is not a browser a page elsewhere could drive.
 */
export function fromAnotherSite(headers: Readonly<Record<string, string | string[] | undefined>>, publicOrigin: string): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = headers.origin;
  return typeof origin === 'string' && origin !== publicOrigin;
}
