import { UsageError, type Parsed } from '../args.js';
import type { Io } from './output.js';

export interface CommandContext {
  io: Io;
  args: Parsed;
  /** --json: one JSON document on stdout, nothing else there. */
  json: boolean;
  /** --yes: destructive commands do not ask first. */
  yes: boolean;
}

export interface Command {
  /** The words that name it: `tokens create`. */
  name: string;
  /** Arguments and flags after the name, as shown in help: `tok_ID [--expires-in 30d]`. */
  usage: string;
  summary: string;
  /** Flags it takes (besides the global ones); booleans take no value; lists may be given again. */
  flags?: readonly string[];
  booleans?: readonly string[];
  lists?: readonly string[];
  /** One-letter spellings of flags: `{ field: 'F' }` makes `-F` mean `--field`. */
  shorts?: Readonly<Record<string, string>>;
  /** Lines of further help. */
  details?: string;
  run(ctx: CommandContext): Promise<void>;
}

/** The `index`-th positional after the command's name, or a usage error naming it. */
export function arg(ctx: CommandContext, index: number, name: string): string {
  const v = ctx.args.positionals[index];
  if (v === undefined || v === '') throw new UsageError(`missing ${name}`);
  return v;
}

export function noMoreArgs(ctx: CommandContext, count: number): void {
  const extra = ctx.args.positionals.slice(count);
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
}

/** A non-negative integer flag. */
export function intFlag(ctx: CommandContext, name: string, min: number, max: number): number | undefined {
  const v = ctx.args.flags[name];
  if (v === undefined) return undefined;
  if (v === true || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return Number(v);
}

/** An id argument: canonical (`tok_...`) or bare, as the API accepts both; anything else is refused here. */
export function idArg(ctx: CommandContext, index: number, name: string, prefix: string): string {
  return idOf(arg(ctx, index, name), name, prefix);
}

/** An id given as a flag's value or an argument, checked as `idArg` checks one. */
export function idOf(v: string, name: string, prefix: string): string {
  if (!new RegExp(`^(${prefix}_)?[0-9A-Za-z]{1,60}$`).test(v)) throw new UsageError(`${name} must look like ${prefix}_<id>, got "${v}"`);
  return v;
}
