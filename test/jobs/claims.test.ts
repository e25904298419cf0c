import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { as, ENGINE } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { testRunner } from '../helpers/jobs.js';
import { jobStore } from '../../src/jobs/store.js';
import { startOperation } from '../../src/operations/service.js';

/** The kinds these tests run, with their attempts (the platform's own table is src/job-kinds.ts). */
const KINDS = { 't.killer': { maxAttempts: 3 }, 't.survivor': { maxAttempts: 2 } };

const h = useTestApp();
const s = h.seeded;

const runner = (workerId: string, opts: { leaseMs?: number } = {}) => testRunner(h.database, h.clock, KINDS, { workerId, ...opts });

const operation = async (id: string) => (await h.app.inject({ method: 'GET', url: `/v1/operations/${id}`, headers: as(s.apiToken) })).json();

describe('a job whose worker dies on every attempt', () => {
  test('is run max_attempts times, then failed at the next claim with its operation, never run again', async () => {
    const kind = 't.killer';
    const op = await startOperation(h.database.db, h.clock, s.workspaceId, kind);
    const id = (await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { n: 1 }, operationId: op }, 3))!;
    // Three workers each claim it and die holding it (kill -9, out of memory): leases run out.
    for (let i = 1; i <= 3; i++) {
      const claimed = await jobStore.claim(h.database.db, h.database.engine, `dead-${i}`, h.clock.nowMs(), 1000, [kind]);
      assert.equal(claimed?.id, id, `attempt ${i} is claimed`);
      assert.equal(claimed?.attempts, i);
      h.clock.advanceSeconds(2);
    }
    assert.equal(await jobStore.claim(h.database.db, h.database.engine, 'peek', h.clock.nowMs(), 1000, [kind]), null, 'a claim never takes a job with no attempt left');

    const r = runner('alive');
    let ran = 0;
    const givenUp: unknown[] = [];
    r.register(
      kind,
      async () => {
        ran++;
        return {};
      },
      { onGiveUp: async (job, reason) => void givenUp.push({ payload: job.payload, attempt: job.attempt, reason }) },
    );
    assert.equal(await r.runDue(), 0);
    assert.equal(ran, 0, 'not run a fourth time');
    const row = (await jobStore.get(h.database.db, id))!;
    assert.deepEqual([row.state, row.attempts, row.locked_by], ['failed', 3, null]);
    assert.match(row.last_error!, /stopped \(killed or out of memory\) during each of its 3 attempts/);
    assert.equal(givenUp.length, 1);
    assert.deepEqual((givenUp[0] as { payload: unknown }).payload, { n: 1 });
    const o = await operation(op);
    assert.equal(o.done, true);
    assert.equal(o.error.code, 7399);
    assert.equal(o.error.message, row.last_error);
    h.clock.advanceSeconds(3600);
    assert.equal(await r.runDue(), 0);
    assert.equal(ran, 0);
    assert.equal(givenUp.length, 1, 'given up once');
  });

  test('a job that died on an attempt before its last is taken over and run again', async () => {
    const kind = 't.survivor';
    const id = (await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: null }, 2))!;
    await jobStore.claim(h.database.db, h.database.engine, 'dead', h.clock.nowMs(), 1000, [kind]);
    h.clock.advanceSeconds(2);
    const r = runner('alive-2');
    let ran = 0;
    r.register(kind, async () => {
      ran++;
      return {};
    });
    assert.equal(await r.runDue(), 1);
    assert.equal(ran, 1);
    const row = (await jobStore.get(h.database.db, id))!;
    assert.deepEqual([row.state, row.attempts], ['succeeded', 2]);
  });

  test('a render whose worker died on every attempt is failed with its operation', async () => {
    const pkg = (await h.app.inject({ method: 'POST', url: '/v1/packages', headers: as(s.apiToken), payload: { name: 'killer' } })).json();
    const v = (await h.app.inject({ method: 'POST', url: `/v1/packages/${pkg.id}/versions`, headers: as(s.apiToken), payload: { semver: '1.0.0', files: { a: 'x' } } })).json();
    const install = (await h.app.inject({ method: 'POST', url: '/v1/installs', headers: as(s.apiToken), payload: { name: 'killer', package_id: pkg.id, version_id: v.id } })).json();
    const render = (await h.app.inject({ method: 'GET', url: `/v1/installs/${install.id}/renders`, headers: as(s.apiToken) })).json().data[0];
    for (let i = 0; i < 5; i++) {
      const claimed = await jobStore.claim(h.database.db, h.database.engine, `dead-${i}`, h.clock.nowMs(), 1000, ['render.run']);
      assert.ok(claimed);
      h.clock.advanceSeconds(2);
    }
    await h.app.jobs.runDue();
    const failed = (await h.app.inject({ method: 'GET', url: `/v1/renders/${render.id}`, headers: as(s.apiToken) })).json();
    assert.equal(failed.state, 'failed');
    assert.match(failed.message, /^Gave up: the worker running this job stopped/);
    assert.equal((await operation(render.operation_id)).error.code, 7399);
  });
});

describe('claims skip jobs another worker holds (FOR UPDATE SKIP LOCKED)', () => {
  test(ENGINE === 'postgres' ? 'a claim returns another due job at once while one job row is locked' : 'SQLite has no row locks (see the test body)', async (t) => {
    if (ENGINE !== 'postgres') {
      // SQLite locks the whole database for a writer, never a row: a claim (one UPDATE statement)
      // runs while no other writer does, so there is no row another claim could be made to wait
      // on, and nothing to skip. Two workers never claim the same job because their claims run
      // one after another (the "two workers ... exactly once" test of runner.test.ts).
      t.skip('row locks and SKIP LOCKED are PostgreSQL behaviours');
      return;
    }
    const kind = `t.skip-${Date.now()}`;
    const first = (await jobStore.insert(h.database.db, h.clock.nowMs() - 2000, { kind, payload: { n: 1 }, runAt: h.clock.nowMs() - 2000 }, 5))!;
    const second = (await jobStore.insert(h.database.db, h.clock.nowMs() - 1000, { kind, payload: { n: 2 }, runAt: h.clock.nowMs() - 1000 }, 5))!;
    // Another worker's transaction holds the row lock on the job every claim would take first.
    const holder = new pg.Client({ connectionString: h.dbEnv.DATABASE_URL });
    await holder.connect();
    const watcher = new pg.Client({ connectionString: h.dbEnv.DATABASE_URL });
    await watcher.connect();
    try {
      await holder.query('begin');
      const locked = await holder.query('select id from jobs where id = $1 for update', [first]);
      assert.equal(locked.rowCount, 1);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const claim = jobStore.claim(h.database.db, h.database.engine, 'skipper', h.clock.nowMs(), 60_000, [kind]);
      // A plain FOR UPDATE (or none: the UPDATE's own row lock) would wait for the holder's commit:
      // PostgreSQL then shows a session blocked by the holder. Seen, not guessed from a time (a
      // claim slowed by a loaded machine is not a claim waiting on a lock). Asked on a connection
      // of its own, outside the holder's transaction: inside one, pg_stat_activity is the snapshot
      // of its first read.
      let answered = false;
      void claim.then(
        () => (answered = true),
        () => (answered = true),
      );
      const blocked = (async () => {
        while (!answered) {
          const { rows } = await watcher.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holderPid]);
          if (rows[0]!.n > 0) return 'blocked' as const;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return claim;
      })();
      const got = await Promise.race([claim, blocked]);
      assert.notEqual(got, 'blocked', 'the claim waited on the locked row instead of skipping it');
      assert.equal((got as { id: string }).id, second, 'the next due job, not the locked one');
      await blocked;
      await holder.query('rollback');
      await claim;
      const after = await jobStore.claim(h.database.db, h.database.engine, 'skipper', h.clock.nowMs(), 60_000, [kind]);
      assert.equal(after?.id, first, 'once the lock is gone the job is claimed');
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
      await watcher.end();
    }
  });
});
