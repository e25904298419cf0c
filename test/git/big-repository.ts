import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/**
 * Puts a commit with one large file of random (incompressible) bytes on top of `main` of a bare
 * repository, straight through git: a fetch of it cannot finish while its client reads nothing
 * (git blocks writing once the pipes and socket buffers are full), so a test can hold a live
 * `git upload-pack` for as long as it likes. Returns the new head.
 */
export function addLargeCommit(gitDir: string, bytes = 16 * 1024 * 1024): string {
  const env = { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t.invalid' };
  const run = (args: string[], input?: Buffer | string) => execFileSync('git', args, { env, encoding: 'utf8', maxBuffer: 1024 * 1024, ...(input !== undefined ? { input } : {}) }).trim();
  const blob = run(['hash-object', '-w', '--stdin'], randomBytes(bytes));
  const tree = run(['mktree'], `100644 blob ${blob}\tlarge.bin\n`);
  let parent: string | null = null;
  try {
    parent = run(['rev-parse', '--verify', '--quiet', 'refs/heads/main']);
  } catch {
    parent = null;
  }
  const commit = run(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', 'large'], '');
  run(['update-ref', 'refs/heads/main', commit]);
  return commit;
}

/**
 * More bytes than loopback can hold between a writer and a reader that never reads, whatever the
 * kernel's buffer autotuning makes of them: twice its largest receive and send buffers, and 16 MiB
 * more. A fetch of a commit this large stalls on the full socket; of a smaller one, the whole
 * answer could sit in the buffers (32 MiB receive + 4 MiB send here), the server would finish and
 * wait on keep-alive, and a client that never reads would never see the connection close.
 */
export function bytesBeyondSocketBuffers(): number {
  const largest = (file: string) => Number(fs.readFileSync(file, 'utf8').trim().split(/\s+/).at(-1));
  try {
    return 2 * (largest('/proc/sys/net/ipv4/tcp_rmem') + largest('/proc/sys/net/ipv4/tcp_wmem')) + 16 * 1024 * 1024;
  } catch {
    return 96 * 1024 * 1024;
  }
}

/** A v0 upload-pack request for a clone of `want`: one want line with capabilities, then done. */
export function cloneRequest(want: string): Buffer {
  const pkt = (text: string) => (Buffer.byteLength(text) + 4).toString(16).padStart(4, '0') + text;
  return Buffer.from(`${pkt(`want ${want} multi_ack_detailed side-band-64k ofs-delta\n`)}0000${pkt('done\n')}`);
}

/** Live processes whose command line or working directory involves `gitDir` (upload-pack, pack-objects). */
export function gitProcessesOf(gitDir: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!cmdline.includes('git')) continue;
      // A zombie (killed, not yet reaped) is gone for this purpose.
      const state = /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (state === 'Z') continue;
      let cwd = '';
      try {
        cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        // not ours to read
      }
      if (cmdline.includes(gitDir) || cwd === gitDir) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** Polls until `check` is true or `ms` pass; the last value of `check`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A fetch whose answer is never read: the server's writes stall on a full socket while git runs on. */
export interface HeldFetch {
  status: number;
  /** Ends it from the client's side. */
  close(): void;
  /** Resolves once the connection is closed, by either side. */
  closed: Promise<void>;
}

/** Sends an upload-pack request for `head` to `url` and never reads the answer. */
export function holdFetch(url: string, head: string, headers: Record<string, string>): Promise<HeldFetch> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { ...headers, 'content-type': 'application/x-git-upload-pack-request' } });
    const closed = new Promise<void>((r) => req.on('close', () => r()));
    req.on('response', (res) => {
      res.pause();
      resolve({ status: res.statusCode!, close: () => req.destroy(), closed });
    });
    req.on('error', reject);
    req.end(cloneRequest(head));
  });
}
