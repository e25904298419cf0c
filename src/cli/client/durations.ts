import { UsageError } from '../args.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/**
 * A duration flag in seconds: `90s`, `10m`, `12h`, `30d`, `2w`, or several (`1h30m`). A bare
 * number is refused: `--expires-in 30` once made a token that died in 30 seconds when 30 days
 * were meant, and the unit is what says which.
 */
export function durationFlag(flag: string, raw: string, bounds: { min?: number; max?: number } = {}): number {
  const text = raw.trim().toLowerCase();
  if (/^\d+$/.test(text)) throw new UsageError(`--${flag} needs a unit: ${raw}s, ${raw}m, ${raw}h or ${raw}d`);
  if (!/^(\d{1,7}[smhdw])+$/.test(text)) throw new UsageError(`--${flag} must be a duration such as 90s, 10m, 12h, 30d or 1h30m, got "${raw}"`);
  const seconds = [...text.matchAll(/(\d+)([smhdw])/g)].reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_SECONDS[unit!]!, 0);
  if (bounds.min !== undefined && seconds < bounds.min) throw new UsageError(`--${flag} must be at least ${formatDuration(bounds.min)}`);
  if (bounds.max !== undefined && seconds > bounds.max) throw new UsageError(`--${flag} must be at most ${formatDuration(bounds.max)}`);
  return seconds;
}

/** Seconds as the largest whole units: `90` -> `1m30s`, `86400` -> `1d`. */
export function formatDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  let left = seconds;
  let out = '';
  for (const unit of ['w', 'd', 'h', 'm', 's']) {
    const size = UNIT_SECONDS[unit]!;
    if (left >= size) {
      out += `${Math.floor(left / size)}${unit}`;
      left %= size;
    }
  }
  return out;
}

/** A duration flag of a command, in seconds, or `byDefault` when it is not given. */
export function durationOption(flags: Record<string, string | true>, flag: string, byDefault: number, bounds: { min?: number; max?: number } = {}): number {
  const raw = flags[flag];
  if (raw === undefined) return byDefault;
  if (raw === true) throw new UsageError(`--${flag} needs a value`);
  return durationFlag(flag, raw, bounds);
}

/**
 * A point in time as a flag, in Unix seconds: Unix seconds themselves, an ISO 8601 date or
 * time (`2026-11-01`, `2026-11-01T09:00:00Z`), or a duration ago (`7d`: seven days before now).
 */
export function timeOption(flags: Record<string, string | true>, flag: string, nowSeconds: number): number | undefined {
  const raw = flags[flag];
  if (raw === undefined) return undefined;
  if (raw === true) throw new UsageError(`--${flag} needs a value`);
  if (/^\d{9,11}$/.test(raw)) return Number(raw);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)) {
    const ms = Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw);
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  }
  if (/^(\d{1,7}[smhdw])+$/i.test(raw)) return nowSeconds - durationFlag(flag, raw);
  throw new UsageError(`--${flag} must be Unix seconds, an ISO 8601 date or time (2026-11-01T09:00:00Z), or a duration ago (7d), got "${raw}"`);
}
