import { timingSafeEqual } from 'node:crypto';

/** The browser session's cookie (CONTRACT §9). */
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

/** The session cookie: HttpOnly, SameSite=Lax, Path=/, Secure when the server's public URL is https. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}${secure ? '; Secure' : ''}`;
}

/** Tells the browser to forget the session cookie. */
export const clearedSessionCookie = (secure: boolean) => sessionCookie('', 0, secure);

/** Equal strings, compared in a time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
