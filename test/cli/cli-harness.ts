import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { runClient } from '../../src/cli/client/index.js';
import type { Io } from '../../src/cli/client/output.js';
import { writeCredentials } from '../../src/cli/client/credentials.js';
import type { Seed, TestApp } from '../helpers/harness.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

export interface CliOptions {
  configDir: string;
  stdin?: Buffer | string;
  env?: Record<string, string>;
  /** Called for every wait of the client instead of sleeping (move a clock, approve a login). */
  onSleep?: (ms: number, stderrSoFar: string) => Promise<void> | void;
  /** stdin, stdout and stderr claim to be a terminal, as in an interactive shell. */
  terminal?: boolean;
  /** The terminal's width (with `terminal`). */
  columns?: number;
}

const made: string[] = [];

export function tempConfigDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-cli-'));
  made.push(dir);
  return dir;
}

/** Removes every directory tempConfigDir made (call from `after`). */
export function removeTempConfigDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Runs `wsp <argv>` in this process, with captured streams and a fake sleep. */
export async function runCli(argv: string[], opts: CliOptions): Promise<CliRun> {
  const out: PassThrough & { isTTY?: boolean } = new PassThrough();
  const err: PassThrough & { isTTY?: boolean } = new PassThrough();
  if (opts.terminal) out.isTTY = err.isTTY = true;
  if (opts.columns) (out as PassThrough & { columns?: number }).columns = opts.columns;
  const outChunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  out.on('data', (c: Buffer) => outChunks.push(c));
  err.on('data', (c: Buffer) => errChunks.push(c));
  const stdin: Io['stdin'] = Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]);
  if (opts.terminal) stdin.isTTY = true;
  const io: Io = {
    out,
    err,
    stdin,
    env: { WSP_CONFIG_DIR: opts.configDir, ...opts.env },
    sleep: async (ms) => {
      await opts.onSleep?.(ms, Buffer.concat(errChunks).toString());
    },
  };
  const code = await runClient(argv, io);
  const stdoutBytes = Buffer.concat(outChunks);
  return { code, stdout: stdoutBytes.toString(), stderr: Buffer.concat(errChunks).toString(), stdoutBytes };
}

/** Runs `wsp <argv>` expecting exit 0 (the failure message is its stderr). */
export async function runCliOk(argv: string[], opts: CliOptions): Promise<CliRun> {
  const run = await runCli(argv, opts);
  if (run.code !== 0) throw new Error(`wsp ${argv.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run;
}

/** The user code a `wsp login` printed. */
export function userCodeIn(stderr: string): string | null {
  return /enter the code: ([A-Z]{4}-[A-Z]{4})/.exec(stderr)?.[1] ?? null;
}

/**
 * The app listening, and a config directory holding the credentials of one of the seed's people,
 * as after `wsp login` and `wsp workspace use` (a useTestApp `setup`; `removeTempConfigDirs`
 * in its `teardown` removes the directory).
 */
export async function logInTo(h: TestApp, s: Seed, who: 'owner' | 'admin' | 'member'): Promise<string> {
  const server = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const configDir = tempConfigDir();
  writeCredentials({ server, token: s[who].session, user_id: s[who].userId, workspace: s.workspaceId }, { WSP_CONFIG_DIR: configDir });
  return configDir;
}
