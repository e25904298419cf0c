import fs from 'node:fs';
import { UsageError } from '../args.js';
import { CliError, EXIT } from './exit-codes.js';
import type { Io } from './output.js';

/** A file's text, or stdin's for `-`; a file that cannot be read is exit 1 with the reason. */
export async function readText(io: Io, file: string): Promise<string> {
  if (file === '-') {
    if (io.stdin.isTTY) throw new UsageError('nothing is piped on stdin (for "-")');
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.FAILED);
  }
}

/** `--file FILE` (or `-`) holding one JSON object: a request body, as the API reference shows it. */
export async function readJsonObject(io: Io, flag: string, file: string): Promise<Record<string, unknown>> {
  const text = await readText(io, file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--${flag} ${file} is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`--${flag} ${file} must hold one JSON object`);
  return value as Record<string, unknown>;
}
