import type { Writable } from 'node:stream';

export interface Io {
  out: Writable & { isTTY?: boolean };
  err: Writable & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Waiting between polls: tests pass one that moves their clock instead. */
  sleep(ms: number): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const processIo = (): Io => ({ out: process.stdout, err: process.stderr, stdin: process.stdin, env: process.env, sleep });

export function printJson(io: Io, value: unknown): void {
  io.out.write(`${JSON.stringify(value)}\n`);
}

/** Unix seconds as UTC ISO 8601, `-` for none. */
export function time(seconds: number | null | undefined): string {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : '-';
}

export type Column<T> = [header: string, value: (row: T) => string | number | null | undefined];

/** A plain left-aligned table, one row per item, for people (scripts use --json). */
export function printTable<T>(io: Io, rows: readonly T[], columns: Column<T>[], empty = 'Nothing to show.'): void {
  if (rows.length === 0) {
    io.out.write(`${empty}\n`);
    return;
  }
  const cells = rows.map((r) => columns.map(([, f]) => String(f(r) ?? '-')));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  io.out.write(`${line(columns.map(([h]) => h.toUpperCase()))}\n`);
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

  constructor(private readonly io: Io, private readonly enabled: boolean) {}

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

