import { spawn } from 'node:child_process';
import os from 'node:os';
import { PassThrough, type Readable } from 'node:stream';
import { GitError, isolatedEnv, runGit } from './run-git.js';

/**
 * Read-only git smart HTTP (protocol v0, v1 and v2 over `git upload-pack --stateless-rpc`),
 * what `git http-backend` does for `git-upload-pack`, without a CGI layer: the caller (an HTTP
 * route) has already authenticated the request and found the repository.
 */

export const UPLOAD_PACK_ADVERTISEMENT = 'application/x-git-upload-pack-advertisement';
export const UPLOAD_PACK_REQUEST = 'application/x-git-upload-pack-request';
export const UPLOAD_PACK_RESULT = 'application/x-git-upload-pack-result';

/**
 * The `Git-Protocol` request header as git sends it (`version=2`). Only a value of exactly this
 * shape reaches git's environment; any other is ignored and git speaks protocol v0.
 */
export const GIT_PROTOCOL_RE = /^version=[0-2]$/;

const ADVERTISE_TIMEOUT_MS = 30_000;
/** One fetch (negotiation and pack) of an install repository; bounds a stuck or abandoned process. */
export const UPLOAD_PACK_TIMEOUT_MS = 10 * 60_000;
const STDERR_KEPT = 8192;

/** git exited with an error before writing anything: it refused the request it was given. */
export class UploadPackRefused extends GitError {}

function protocolEnv(protocol: string | undefined): Record<string, string> | undefined {
  return protocol !== undefined && GIT_PROTOCOL_RE.test(protocol) ? { GIT_PROTOCOL: protocol } : undefined;
}

function pktLine(text: string): string {
  return (Buffer.byteLength(text) + 4).toString(16).padStart(4, '0') + text;
}

/** The answer to `GET .../info/refs?service=git-upload-pack`: the refs (v0, v1) or the capabilities (v2). */
export async function advertiseUploadPack(gitDir: string, protocol: string | undefined): Promise<Buffer> {
  const env = protocolEnv(protocol);
  const res = await runGit(['upload-pack', '--stateless-rpc', '--advertise-refs', '--strict', gitDir], { ...(env ? { env } : {}), timeoutMs: ADVERTISE_TIMEOUT_MS });
  if (res.code !== 0) throw new GitError(`git upload-pack --advertise-refs failed (${res.code ?? 'killed'}): ${res.stderr.slice(0, 500)}`, res.code, res.stderr);
  // As git http-backend: v0 and v1 answers start with the service line; v2's capability
  // advertisement stands alone.
  if (env?.GIT_PROTOCOL === 'version=2') return res.stdout;
  return Buffer.concat([Buffer.from(`${pktLine('# service=git-upload-pack\n')}0000`), res.stdout]);
}

/**
 * Runs `git upload-pack --stateless-rpc` on one request body (already inflated) and resolves
 * with its output as a stream once git has written its first bytes, so that an error before
 * that (a request git refuses: UploadPackRefused; git missing or killed: another error) can
 * still be answered as an error. A failure after that is reported to `onLateFailure` and the
 * stream ends where git stopped, as with git http-backend: the client's own checks (pkt-line
 * framing, the pack's checksum) reject a cut answer, and an `ERR` line git wrote reaches it.
 * Destroying the stream (the client went away) kills git.
 */
export function startUploadPack(
  gitDir: string,
  request: Buffer,
  opts: {
    protocol?: string | undefined;
    onLateFailure?: (err: GitError) => void;
    /** Once, when the git process is gone (exited or killed, even with output unread; or never started). */
    onExit?: () => void;
    /** How long one fetch may run before git is killed: UPLOAD_PACK_TIMEOUT_MS (10 minutes). */
    timeoutMs?: number;
  },
): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const env = protocolEnv(opts.protocol);
    const child = spawn('git', ['upload-pack', '--stateless-rpc', '--strict', gitDir], {
      cwd: os.tmpdir(),
      env: isolatedEnv(env, undefined),
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      // A process group of its own: upload-pack runs pack-objects, which a kill of upload-pack
      // alone would leave compressing for a client that has gone (until it next writes).
      detached: true,
    });
    const kill = () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const deadline = setTimeout(kill, opts.timeoutMs ?? UPLOAD_PACK_TIMEOUT_MS);
    deadline.unref();
    let exited = false;
    const gone = () => {
      if (exited) return;
      exited = true;
      clearTimeout(deadline);
      opts.onExit?.();
    };
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEPT) stderr += chunk.toString('utf8');
    });
    const out = new PassThrough();
    let started = false;
    child.stdout.once('data', (first: Buffer) => {
      started = true;
      out.write(first);
      child.stdout.pipe(out, { end: false });
      resolve(out);
    });
    out.on('close', () => {
      kill();
      // What git wrote that nobody will read: drop it, so the pipe closes with the process.
      child.stdout.destroy();
    });
    // The process itself, whether or not its output was read to the end.
    child.on('exit', gone);
    child.on('error', (err) => {
      // No process (spawn failed), or one that could not be killed: either way nothing runs on.
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) gone();
      if (started) out.destroy(err);
      else reject(err);
    });
    // git may stop reading its input early (a request it refuses): that pipe error is not ours.
    child.stdin.on('error', () => {});
    child.on('close', (code, signal) => {
      // Destroyed by its reader (the client went away, so git was killed): nothing left to say.
      if (out.destroyed) return;
      if (code === 0) {
        // A request that needs no answer (git's auth probe, a bare flush) answers an empty body.
        if (!started) resolve(out);
        out.end();
        return;
      }
      const detail = stderr.trim().slice(0, 500);
      const message = `git upload-pack ${signal ? `was killed (${signal})` : `exited ${code}`}: ${detail}`;
      if (!started) {
        reject(code === null ? new GitError(message, code, detail) : new UploadPackRefused(message, code, detail));
        return;
      }
      opts.onLateFailure?.(new GitError(message, code, detail));
      out.end();
    });
    child.stdin.end(request);
  });
}
