import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { api, type ApiOptions } from '../helpers/processes.js';

/**
 * Calls for real server processes (test/helpers/processes.ts's api) as one credential; `retry:
 * false` for a load whose every answer is counted (a fault's 503s among them), see ApiOptions.
 */
export function client(credential: string, workspaceId?: string, opts: Pick<ApiOptions, 'retry'> = {}) {
  const call = (base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(base, method, url, { credential, ...(workspaceId ? { workspaceId } : {}), ...(body === undefined ? {} : { body }), headers, ...opts });
  return {
    call,
    async ok(base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
      const res = await call(base, method, url, body, headers);
      assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
      return res.body;
    },
    /** Every item of a paged list. */
    async all(base: string, url: string): Promise<any[]> {
      const out: any[] = [];
      let cursor: string | null = null;
      do {
        const sep = url.includes('?') ? '&' : '?';
        const res = await call(base, 'GET', `${url}${sep}limit=${url.startsWith('/v1/notifications') ? 50 : 100}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200, res.text);
        out.push(...res.body.data);
        cursor = res.body.next_cursor;
      } while (cursor);
      return out;
    },
  };
}

/** The same master key for every process and restart of one test (a key file would be per data dir anyway). */
export const masterKey = () => randomBytes(32).toString('base64');

export function git(repo: string, ...args: string[]): string {
  return execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: repo, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The bare repositories of a data directory's installs. */
export function repositories(dataDir: string): string[] {
  const root = path.join(dataDir, 'repos');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((n) => n.endsWith('.git'))
    .map((n) => path.join(root, n));
}

/**
 * What a repository of an install must be after anything happened to its server, by the rule
 * of docs/spec-gaps.md (Installs: "The database is the source of truth of a restore, and `main`
 * never names a commit the database does not have"; src/installs/restore.ts and
 * src/installs/renders/landing.ts move `main` only once the render naming the commit is committed):
 * - it passes `git fsck --strict`;
 * - every commit on `main` names, by its Render-Id trailer, a render of the install, and no two
 *   commits on `main` name the same render (a retried render or restore made no second commit);
 * - every render that names a commit, once the renders are done, names one on `main`.
 * Returns the number of commits on `main`.
 */
export function checkRepository(repo: string, renders: { id: string; commit_sha: string | null; state?: string }[]): number {
  git(repo, 'fsck', '--strict', '--no-dangling', '--no-progress');
  const chain = git(repo, 'rev-list', 'refs/heads/main').split('\n').filter(Boolean);
  const ids = new Set(renders.map((r) => r.id));
  const seen = new Map<string, string>();
  for (const sha of chain) {
    const trailer = /^Render-Id: (\S+)$/m.exec(git(repo, 'cat-file', 'commit', sha))?.[1];
    assert.ok(trailer && ids.has(trailer), `${repo}: commit ${sha} on main names no render of its install (${trailer})`);
    assert.ok(!seen.has(trailer), `${repo}: commits ${seen.get(trailer)} and ${sha} on main both name render ${trailer}`);
    seen.set(trailer, sha);
  }
  for (const r of renders) {
    if (r.commit_sha) assert.ok(chain.includes(r.commit_sha), `${repo}: render ${r.id} names ${r.commit_sha}, which is not on main`);
    if (r.commit_sha) assert.equal(seen.get(r.id), r.commit_sha, `${repo}: render ${r.id} names ${r.commit_sha}, main has ${seen.get(r.id)} for it`);
  }
  return chain.length;
}

/** A failure of the connection itself (the server was killed), as opposed to an answer. */
export function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError && /fetch failed|terminated|socket/i.test(err.message);
}
