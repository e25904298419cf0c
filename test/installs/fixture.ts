import { execFileSync } from 'node:child_process';
import path from 'node:path';
import assert from 'node:assert/strict';
import { as, type Seed, type TestApp } from '../helpers/harness.js';
import { repoRoot } from '../../src/config.js';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';

/**
 * Makes the database refuse, at COMMIT, any transaction that inserts a row of `table` matching
 * `when` (SQL over `new.<column>`): every statement succeeds, the commit fails. A trigger inserts
 * a row that breaks a deferred foreign key, which both engines check only at COMMIT. It shows
 * what is left behind by work done before the commit (a repository, a branch move).
 */
export async function failAtCommit(database: Database, table: string, when: string): Promise<{ remove(): Promise<void> }> {
  const tag = `wsp_probe_${randomBytes(4).toString('hex')}`;
  const run = (text: string) => sql.raw(text).execute(database.db);
  await run(`create table ${tag}_parent (id text primary key)`);
  await run(`create table ${tag} (ref text references ${tag}_parent(id) deferrable initially deferred)`);
  if (database.engine === 'sqlite') {
    await run(`create trigger ${tag}_t after insert on ${table} when ${when} begin insert into ${tag} (ref) values ('missing'); end`);
  } else {
    await run(`create function ${tag}_f() returns trigger language plpgsql as $$ begin insert into ${tag} (ref) values ('missing'); return new; end $$`);
    await run(`create trigger ${tag}_t after insert on ${table} for each row when (${when}) execute function ${tag}_f()`);
  }
  return {
    async remove() {
      if (database.engine === 'sqlite') await run(`drop trigger ${tag}_t`);
      else {
        await run(`drop trigger ${tag}_t on ${table}`);
        await run(`drop function ${tag}_f()`);
      }
      // Migrations look only at their own schema (src/db/current-schema-introspector.ts), so
      // dropping tables here cannot fail another test file's start.
      await run(`drop table ${tag}`);
      await run(`drop table ${tag}_parent`);
    },
  };
}

/** Calls and checks shared by the packages, installs and renders tests. */
export function installFixture(h: TestApp, s: Seed) {
  const auth = (extra: Record<string, string> = {}) => as(s.apiToken, undefined, extra);

  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}) {
    return h.app.inject({ method, url, headers: auth(headers), ...(payload === undefined ? {} : { payload: payload as object }) });
  }

  async function ok<T = any>(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await call(method, url, payload, headers);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  }

  let n = 0;
  const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

  return {
    call,
    ok,
    unique,
    createPackage: (name = unique('pkg')) => ok('POST', '/v1/packages', { name }),
    publish: (packageId: string, semver: string, files: Record<string, string>) => ok('POST', `/v1/packages/${packageId}/versions`, { semver, files }),
    createInstall: (body: Record<string, unknown>) => ok('POST', '/v1/installs', { name: unique('inst'), ...body }),
    getInstall: (id: string) => ok('GET', `/v1/installs/${id}`),
    getRender: (id: string) => ok('GET', `/v1/renders/${id}`),
    renders: async (installId: string) => (await ok('GET', `/v1/installs/${installId}/renders?limit=100`)).data as any[],
    patch: async (installId: string, body: unknown) => {
      const { etag } = await ok('GET', `/v1/installs/${installId}`);
      return ok('PATCH', `/v1/installs/${installId}`, body, { 'if-match': etag });
    },
    restore: (installId: string, renderId: string, ifMatch: string, key = unique('key')) =>
      call('POST', `/v1/installs/${installId}:restore`, { render_id: renderId }, { 'if-match': ifMatch, 'idempotency-key': key }),
    /** A package with a version 1.0.0 and 2.0.0 of one template, and an install of 1.0.0. */
    async installed(values: Record<string, unknown> = { who: 'world' }) {
      const pkg = await ok('POST', '/v1/packages', { name: unique('pkg') });
      const v1 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}} v1\n' } });
      const v2 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '2.0.0', files: { 'hello.txt': 'Hello {{who}} v2\n', 'conf/app.yaml': 'name: {{who}}\n' } });
      const install = await ok('POST', '/v1/installs', { name: unique('inst'), package_id: pkg.id, version_id: v1.id, values });
      return { pkg, v1, v2, install };
    },
    repoPath: (installId: string) => path.join(repoRoot(h.config), `${installId}.git`),
    git(installId: string, ...args: string[]): string {
      return execFileSync('git', args, {
        env: { PATH: process.env.PATH, GIT_DIR: path.join(repoRoot(h.config), `${installId}.git`), GIT_CONFIG_NOSYSTEM: '1' },
        encoding: 'utf8',
      }).trim();
    },
  };
}
