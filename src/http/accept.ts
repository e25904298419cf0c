/**
 * Whether an Accept header admits a media type (RFC 9110 §12.5.1): no header, or an empty one,
 * admits anything; otherwise the most specific range that matches decides (`text/event-stream`
 * over `text/*` over `*\/*`), and `q=0` refuses. curl sends `*\/*`, EventSource the type itself.
 */
export function admits(accept: string | undefined, mediaType: string): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const type = mediaType.toLowerCase();
  const family = `${type.split('/')[0]}/*`;
  let best = -1;
  let quality = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const specificity = range === type ? 2 : range === family ? 1 : range === '*/*' ? 0 : -1;
    if (specificity <= best) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    best = specificity;
    quality = Number.isFinite(value) ? value : 0;
  }
  return best >= 0 && quality > 0;
}
