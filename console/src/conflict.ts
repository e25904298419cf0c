import type { ErrorEnvelope } from '@workspace-platform/sdk';

/** If-Match as the API wants it: the etag of the resource as the person last saw it. */
export const ifMatch = (etag: string) => ({ 'if-match': etag.startsWith('"') ? etag : `"${etag}"` });

/** A 409 on If-Match (7030) in words: someone changed it first, so nothing was done. */
export function explainConflict(error: unknown, thing: string, action: string): string | null {
  const entries = (error as Partial<ErrorEnvelope> | null)?.errors ?? [];
  if (!entries.some((e) => e.code === 7030)) return null;
  return `Someone else changed this ${thing} after you opened it, so the ${action} was not done. The page now shows their version: look it over and try again.`;
}
