import { parseArgs as parseNodeArgs } from 'node:util';

/** A usage problem: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

export interface Parsed {
  positionals: string[];
  flags: Record<string, string | true>;
  /** Flags that may be given more than once (`-f a=1 -f b=2`), every value in order. */
  lists?: Record<string, string[]>;
}

/** The flags a command takes: `--name value` (or `--name=value`) and booleans (`--json`). */
export interface FlagSpec {
  strings?: readonly string[];
  booleans?: readonly string[];
}

type NodeOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/**
 * The command line after a command's name, by node:util's parseArgs in strict mode: a flag the
 * command does not take, a string flag without its value and a boolean given one are usage
 * errors; `--help`/`-h` is always known; after `--` everything is a positional.
 */
export function parseArgs(argv: string[], spec: FlagSpec = {}): Parsed {
  const options: NodeOptions = { help: { type: 'boolean', short: 'h' } };
  for (const name of spec.strings ?? []) options[name] = { type: 'string' };
  for (const name of spec.booleans ?? []) options[name] = { type: 'boolean' };
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseNodeArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(usageMessage(err, options));
  }
  const flags: Record<string, string | true> = {};
  for (const [name, value] of Object.entries(parsed.values)) if (value !== undefined && value !== false) flags[name] = value;
  return { positionals: parsed.positionals, flags };
}

/** node:util's messages suggest its own syntax; ours name the flag and what is wrong with it. */
function usageMessage(err: unknown, options: NodeOptions): string {
  const { code, message } = err as { code?: string; message: string };
  const flag = /'(--?[^' =]+)/.exec(message)?.[1] ?? '';
  const name = flag.replace(/^--?/, '');
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${flag}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return options[name]?.type === 'boolean' ? `--${name} takes no value` : `--${name} needs a value`;
  }
  return message;
}

export function stringFlag(p: Parsed, name: string, required: true): string;
export function stringFlag(p: Parsed, name: string, required?: false): string | undefined;
export function stringFlag(p: Parsed, name: string, required = false): string | undefined {
  const v = p.flags[name];
  if (v === true) throw new UsageError(`--${name} needs a value`);
  if (v === undefined && required) throw new UsageError(`--${name} is required`);
  return v;
}
