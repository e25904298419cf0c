/**
 * What people read and pick, between them and the API's types: times relative to now, error
 * entries by field, a chosen option as the value the API takes.
 */
import type { ErrorEnvelope } from '@workspace-platform/sdk';

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

/**
 * `value` if it is one of `values`, else undefined: what a select or an address gives (a
 * string) as the enum the API takes, checked rather than asserted.
 */
export const oneOf = <T extends string>(values: readonly T[], value: string | undefined): T | undefined => values.find((v) => v === value);

/** The error entries' messages by the last element of their path: shown beside the field. */
export function fieldErrors(error: unknown): Record<string, string> {
  const entries = (error as Partial<ErrorEnvelope> | null)?.errors ?? [];
  const out: Record<string, string> = {};
  for (const e of entries) {
    // The API names where in the request: `body` is the form itself.
    const path = e.path?.[0] === 'body' ? e.path.slice(1) : (e.path ?? []);
    const key = path.join('.');
    if (key && !(key in out)) out[key] = e.message;
  }
  return out;
}
