import type { Writable } from 'node:stream';

export interface Io {
  out: Writable & { isTTY?: boolean; columns?: number };
  err: Writable & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Waiting between polls: tests pass one that moves their clock instead. */
  sleep(ms: number): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const processIo = (): Io => ({ out: process.stdout, err: process.stderr, stdin: process.stdin, env: process.env, sleep });

/** Unix seconds as UTC ISO 8601. */
export const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/**
 * The API's times (`created_at`, ... in Unix seconds) as ISO 8601 strings, as `--json` prints
 * them: what jq, a spreadsheet or a person reads without converting. Everything else as is.
 */
export function withIsoTimes(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => withIsoTimes(v));
  if (typeof value === 'number' && /(^|_)at$/.test(key) && Number.isInteger(value)) return isoTime(value);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withIsoTimes(v, k)]));
}

export function printJson(io: Io, value: unknown): void {
  io.out.write(`${JSON.stringify(withIsoTimes(value))}\n`);
}

/**
 * How tables show times: relative (`5 min ago`) on a terminal, ISO 8601 in a pipe or a file.
 * Set once per command run from its output stream (`timeStyleFor`).
 */
let timeStyle: { relative: boolean; now: () => number } = { relative: false, now: () => Date.now() };

export function timeStyleFor(io: Io, now: () => number = () => Date.now()): void {
  timeStyle = { relative: io.out.isTTY === true, now };
}

const RELATIVE_STEPS: [limit: number, size: number, unit: string][] = [
  [60, 1, 's'],
  [3600, 60, 'min'],
  [86400, 3600, 'h'],
  [86400 * 60, 86400, 'd'],
  [Infinity, 86400 * 30, 'mo'],
];

/** `5 min ago`, `in 3 d`, `just now`. */
export function relativeTime(seconds: number, nowMs: number): string {
  const delta = Math.round(seconds - nowMs / 1000);
  const size = Math.abs(delta);
  if (size < 5) return 'just now';
  const [, step, unit] = RELATIVE_STEPS.find(([limit]) => size < limit)!;
  const n = Math.floor(size / step);
  return delta < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** A time of the API (Unix seconds) for a table: relative on a terminal, ISO 8601 otherwise; `-` for none. */
export function time(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number') return '-';
  return timeStyle.relative ? relativeTime(seconds, timeStyle.now()) : isoTime(seconds);
}

export type Column<T> = [header: string, value: (row: T) => string | number | null | undefined];

const MIN_COLUMN = 8;

/**
 * Column widths that fit `width` characters: the widest column gives up characters first, none
 * below MIN_COLUMN (a table of many columns on a narrow terminal may still wrap).
 */
export function fitWidths(widths: number[], width: number | undefined): number[] {
  const out = [...widths];
  if (!width) return out;
  const total = () => out.reduce((a, b) => a + b, 0) + 2 * (out.length - 1);
  while (total() > width) {
    const widest = out.indexOf(Math.max(...out));
    if (out[widest]! <= MIN_COLUMN) break;
    out[widest] = Math.max(MIN_COLUMN, out[widest]! - (total() - width));
  }
  return out;
}

const clip = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`);

/**
 * A plain left-aligned table, one row per item, for people (scripts use --json). On a terminal
 * it fits the window: long cells are cut with an ellipsis rather than wrapped.
 */
export function printTable<T>(io: Io, rows: readonly T[], columns: Column<T>[], empty = 'Nothing to show.'): void {
  if (rows.length === 0) {
    io.out.write(`${empty}\n`);
    return;
  }
  const full = rows.map((r) => columns.map(([, f]) => String(f(r) ?? '-')));
  const natural = columns.map(([h], i) => Math.max(h.length, ...full.map((c) => c[i]!.length)));
  const widths = fitWidths(natural, io.out.isTTY ? io.out.columns : undefined);
  const cells = full.map((row) => row.map((v, i) => clip(v, widths[i]!)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  io.out.write(`${line(columns.map(([h], i) => clip(h.toUpperCase(), widths[i]!)))}\n`);
  for (const c of cells) io.out.write(`${line(c)}\n`);
}

/** `key: value` lines for one object. */
export function printFields(io: Io, fields: [string, string | number | null | undefined][]): void {
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [k, v] of fields) io.out.write(`${`${k}:`.padEnd(width + 1)} ${v ?? '-'}\n`);
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A spinner on stderr while waiting (progress goes to stderr, data to stdout), only when stderr
 * is a terminal and the output is not --json (in a pipe or a log it would be noise).
 */
export class Spinner {
  private timer: NodeJS.Timeout | null = null;
  private frame = 0;
  private text = '';

  constructor(
    private readonly io: Io,
    private readonly enabled: boolean,
  ) {}

  static for(io: Io, json: boolean): Spinner {
    return new Spinner(io, !json && io.err.isTTY === true);
  }

  start(text: string): void {
    this.text = text;
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.draw(), 100);
    this.draw();
  }

  update(text: string): void {
    this.text = text;
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.io.err.write('\r\x1b[K');
  }

  private draw(): void {
    this.io.err.write(`\r\x1b[K${FRAMES[this.frame++ % FRAMES.length]} ${this.text}`);
  }
}
