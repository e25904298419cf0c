/** A usage problem: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

export interface Parsed {
  positionals: string[];
  flags: Record<string, string | true>;
}

/** `--name value`, `--name=value` and boolean `--json`; the rest are positionals. */
export function parseArgs(argv: string[], booleans: readonly string[] = []): Parsed {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      if (eq > 0) flags[name] = arg.slice(eq + 1);
      else if (booleans.includes(name)) flags[name] = true;
      else {
        const value = argv[i + 1];
        if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
        flags[name] = value;
        i++;
      }
    } else if (arg === '-h') {
      flags.help = true;
    } else {
      positionals.push(arg);
    }
  }
  return { positionals, flags };
}

export function stringFlag(p: Parsed, name: string, required: true): string;
export function stringFlag(p: Parsed, name: string, required?: false): string | undefined;
export function stringFlag(p: Parsed, name: string, required = false): string | undefined {
  const v = p.flags[name];
  if (v === true) throw new UsageError(`--${name} needs a value`);
  if (v === undefined && required) throw new UsageError(`--${name} is required`);
  return v;
}
