/** What people read, from what the server answers: times relative to now, error entries by field. */

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 31_536_000],
  ['month', 2_592_000],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

export function relative(unixSeconds: number, now = Date.now() / 1000): string {
  const delta = unixSeconds - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(delta) >= size || unit === 'second') return RELATIVE.format(Math.round(delta / size), unit);
  }
  return '';
}

/** The error entries' messages by the last element of their path: shown beside the field. */
export function fieldErrors(error: unknown): Record<string, string> {
  const entries = (error as { errors?: { message: string; path?: string[] }[] } | null)?.errors ?? [];
  const out: Record<string, string> = {};
  for (const e of entries) {
    // The API names where in the request: `body` is the form itself.
    const path = e.path?.[0] === 'body' ? e.path.slice(1) : (e.path ?? []);
    const key = path.join('.');
    if (key && !(key in out)) out[key] = e.message;
  }
  return out;
}
