import { spawn } from 'node:child_process';
import os from 'node:os';

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitRun {
  /** The bare repository the command works on. */
  gitDir?: string;
  cwd?: string;
  input?: Buffer | string;
  /** Added to the isolated environment (author, committer and their dates). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/**
 * The environment git sees is built from nothing but PATH: no inherited GIT_* variable (from a
 * hook or a developer's shell) and no system or global configuration (a user's
 * `commit.gpgSign` would make commit-tree ask for a key) can change what a command does.
 */
export function isolatedEnv(extra: Record<string, string> | undefined, gitDir: string | undefined): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: os.tmpdir(),
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_TERMINAL_PROMPT: '0',
    ...(gitDir ? { GIT_DIR: gitDir } : {}),
    ...extra,
  };
}

let started = 0;

/** git processes this process has started: tests and the bench show which paths spawn none. */
export const gitProcessesStarted = (): number => started;

/** Runs git without a shell; resolves with the exit code, never throws for a non-zero one. */
export function runGit(args: string[], opts: GitRun = {}): Promise<GitResult> {
  started++;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: opts.cwd ?? os.tmpdir(),
      env: isolatedEnv(opts.env, opts.gitDir),
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      timeout: opts.timeoutMs ?? 60_000,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT_BYTES) child.kill('SIGKILL');
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString('utf8');
    });
    child.on('error', reject);
    // A child that exits before reading all its input closes the pipe: that is not our error.
    child.stdin.on('error', () => {});
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err.trim() }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs git and returns its standard output; any non-zero exit is a GitError. */
export async function git(args: string[], opts: GitRun = {}): Promise<Buffer> {
  const res = await runGit(args, opts);
  if (res.code !== 0) throw new GitError(`git ${args[0]} failed (${res.code ?? 'killed'}): ${res.stderr.slice(0, 500)}`, res.code, res.stderr);
  return res.stdout;
}
