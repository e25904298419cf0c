import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { testRunner } from '../helpers/jobs.js';
import { waitFor } from '../helpers/wait.js';
import { backoffMs, type JobPool } from '../../src/jobs/runner.js';
import { PermanentJobError } from '../../src/jobs/failure.js';
import { jobStore } from '../../src/jobs/store.js';
import { startOperation } from '../../src/operations/service.js';

/** The kinds these tests run, with their attempts (the platform's own table is src/job-kinds.ts). */
const KINDS = {
  't.echo': { maxAttempts: 5 },
  't.flaky': { maxAttempts: 3 },
  't.permanent': { maxAttempts: 5 },
  't.count': { maxAttempts: 5 },
  't.lease': { maxAttempts: 5 },
  't.tick': { maxAttempts: 1 },
  't.rollback': { maxAttempts: 5 },
  't.slow': { maxAttempts: 5 },
  't.wait': { maxAttempts: 1 },
  't.stuck': { maxAttempts: 1 },
  't.long': { maxAttempts: 1 },
  't.quick': { maxAttempts: 1 },
  't.pooled': { maxAttempts: 1 },
  't.grouped': { maxAttempts: 1 },
  't.fair-burst': { maxAttempts: 1 },
  't.fair-turns': { maxAttempts: 1 },
  't.fair-late': { maxAttempts: 1 },
};

const h = useTestApp();
const s = h.seeded;

function runner(workerId: string, opts: { leaseMs?: number; pollMs?: number; concurrency?: number; pools?: JobPool[] } = {}) {
  return testRunner(h.database, h.clock, KINDS, { workerId, ...opts });
}

describe('job runner', () => {
  test('a job runs once and completes its operation with the result', async () => {
    const r = runner('w1');
    const seen: unknown[] = [];
    r.register('t.echo', async (job) => {
      seen.push(job.payload);
      return { echoed: job.payload };
    });
    const op = await startOperation(h.database.db, h.clock, s.workspaceId, 't.echo');
    await r.queue.enqueue(h.database.db, { kind: 't.echo', payload: { n: 1 }, operationId: op });
    assert.equal(await r.runDue(), 1);
    assert.equal(await r.runDue(), 0);
    assert.deepEqual(seen, [{ n: 1 }]);
    const res = await h.app.inject({ method: 'GET', url: `/v1/operations/${op}`, headers: as(s.apiToken) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual({ ...res.json<object>(), created_at: 0, updated_at: 0 }, { id: op, kind: 't.echo', done: true, error: null, result: { echoed: { n: 1 } }, created_at: 0, updated_at: 0 });
  });

  test('a failing job is retried with backoff, then fails for good and records the error', async () => {
    const r = runner('w2');
    let calls = 0;
    r.register('t.flaky', async () => {
      calls++;
      throw new Error(`boom ${calls}`);
    });
    const op = await startOperation(h.database.db, h.clock, s.workspaceId, 't.flaky');
    const id = (await r.queue.enqueue(h.database.db, { kind: 't.flaky', payload: null, operationId: op }))!;
    assert.equal(await r.runDue(), 1);
    const afterFirst = (await jobStore.get(h.database.db, id))!;
    assert.equal(afterFirst.state, 'queued');
    assert.ok(afterFirst.run_at > h.clock.nowMs(), 'the retry waits for its backoff');
    assert.equal(await r.runDue(), 0, 'not due before the backoff ends');
    h.clock.advanceSeconds(2);
    assert.equal(await r.runDue(), 1);
    h.clock.advanceSeconds(4);
    assert.equal(await r.runDue(), 1);
    assert.equal(calls, 3);
    const last = (await jobStore.get(h.database.db, id))!;
    assert.equal(last.state, 'failed');
    assert.equal(last.last_error, 'boom 3');
    const opRes = (await h.app.inject({ method: 'GET', url: `/v1/operations/${op}`, headers: as(s.apiToken) })).json();
    assert.equal(opRes.done, true);
    assert.equal(opRes.result, null);
    // The job-error policy (src/jobs/failure.ts): the operation shows a documented code and fixed
    // words; the error's own text is in the job's log line and its last_error only.
    assert.deepEqual(opRes.error, { code: 7399, message: 'The job failed on an internal error; the server log has the details under its job id' });
  });

  test('a permanent error fails at once', async () => {
    const r = runner('w3');
    let calls = 0;
    r.register('t.permanent', async () => {
      calls++;
      throw new PermanentJobError('cannot ever work', 7301);
    });
    const op = await startOperation(h.database.db, h.clock, s.workspaceId, 't.permanent');
    await r.queue.enqueue(h.database.db, { kind: 't.permanent', payload: null, operationId: op });
    await r.runDue();
    h.clock.advanceSeconds(600);
    await r.runDue();
    assert.equal(calls, 1);
    const opRes = (await h.app.inject({ method: 'GET', url: `/v1/operations/${op}`, headers: as(s.apiToken) })).json();
    assert.deepEqual(opRes.error, { code: 7301, message: 'cannot ever work' });
  });

  test('backoff grows and is capped', () => {
    assert.ok(backoffMs(1) >= 750 && backoffMs(1) <= 1250);
    assert.ok(backoffMs(3) >= 3000 && backoffMs(3) <= 5000);
    assert.ok(backoffMs(30) <= 5 * 60 * 1000 * 1.25);
  });

  test('two workers on one database run each of 40 jobs exactly once', async () => {
    const counts = new Map<number, number>();
    // Each worker's jobs wait until the other worker has one in hand: so both claim while the
    // other holds claims, whatever the scheduling (a fast worker could otherwise take all 40).
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    };
    const gates = new Map([
      ['wa', gate()],
      ['wb', gate()],
    ]);
    // One deadline for all: if a worker never gets a job, every wait ends with it (the jobs fail
    // and the assertions below say so) rather than each one waiting in turn.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('one worker took no job while the other held one')), 20_000);
    });
    deadline.catch(() => undefined);
    const handler = (worker: 'wa' | 'wb') => async (job: { payload: { n: number } }) => {
      counts.set(job.payload.n, (counts.get(job.payload.n) ?? 0) + 1);
      gates.get(worker)!.open();
      await Promise.race([gates.get(worker === 'wa' ? 'wb' : 'wa')!.opened, deadline]);
      await new Promise((r) => setTimeout(r, 1));
      return {};
    };
    const a = runner('wa', { concurrency: 3 });
    const b = runner('wb', { concurrency: 3 });
    a.register('t.count', handler('wa'));
    b.register('t.count', handler('wb'));
    for (let n = 0; n < 40; n++) await a.queue.enqueue(h.database.db, { kind: 't.count', payload: { n } });
    const [ra, rb] = await Promise.all([a.runDue(), b.runDue()]).finally(() => clearTimeout(timer));
    assert.equal(ra + rb, 40);
    assert.equal(counts.size, 40);
    assert.ok(
      [...counts.values()].every((c) => c === 1),
      'no job ran twice',
    );
    assert.ok(ra > 0 && rb > 0, `both workers took work (${ra} and ${rb})`);
    const failed = await h.database.db.selectFrom('jobs').select(['id', 'last_error']).where('kind', '=', 't.count').where('state', '!=', 'succeeded').execute();
    assert.deepEqual(failed, [], 'every job succeeded');
  });

  test('a job whose worker died is taken over after its lease; the dead worker cannot finish it', async () => {
    const kinds = ['t.lease'];
    const id = (await jobStore.insert(h.database.db, h.clock.nowMs(), { kind: 't.lease', payload: null }, 5))!;
    const claimed = await jobStore.claim(h.database.db, h.database.engine, 'dead', h.clock.nowMs(), 1000, kinds);
    assert.equal(claimed?.id, id);
    assert.equal(await jobStore.claim(h.database.db, h.database.engine, 'other', h.clock.nowMs(), 1000, kinds), null, 'held while the lease lasts');
    h.clock.advanceSeconds(2);
    const r = runner('alive');
    let ran = 0;
    r.register('t.lease', async () => {
      ran++;
      return {};
    });
    assert.equal(await r.runDue(), 1);
    assert.equal(ran, 1);
    assert.equal(await jobStore.finish(h.database.db, id, 'dead', h.clock.nowMs(), { state: 'failed' }, 'late'), false);
    assert.equal((await jobStore.get(h.database.db, id))!.state, 'succeeded');
  });

  test('periodic work runs once per period across workers', async () => {
    let ran = 0;
    const mk = (w: string) => {
      const r = runner(w);
      r.register('t.tick', async () => {
        ran++;
        return {};
      });
      r.every('t.tick', 60);
      return r;
    };
    const a = mk('pa');
    const b = mk('pb');
    await Promise.all([a.runDue(), b.runDue(), a.runDue()]);
    assert.equal(ran, 1);
    h.clock.advanceSeconds(60);
    await Promise.all([a.runDue(), b.runDue()]);
    assert.equal(ran, 2);
  });

  test('an idle started runner with periodic work waits for its poll: re-queuing a period already queued does not wake it', async () => {
    const r = runner('w-idle', {});
    r.register('t.tick', async () => ({}));
    r.every('t.tick', 3600);
    let passes = 0;
    const enqueue = r.queue.enqueue.bind(r.queue);
    // Each pass of the runner queues its periodic work (deduplicated): counting those counts passes.
    r.queue.enqueue = async (db, job) => {
      if (job.kind === 't.tick') passes++;
      return enqueue(db, job);
    };
    r.start();
    await new Promise((res) => setTimeout(res, 1200));
    await r.stop();
    // The poll is 500 ms: a pass at start, one woken by the period's own job, then one per poll.
    assert.ok(passes >= 2, `the runner ran (${passes} passes)`);
    assert.ok(passes <= 6, `an idle runner made ${passes} passes in 1.2 s: it spins instead of waiting for its poll`);
  });

  test('an enqueue wakes a started runner for its job only: periodic work is scheduled at the poll, not on every wake', async () => {
    const r = runner('w-wakes', { pollMs: 60_000 });
    r.register('t.tick', async () => ({}));
    r.every('t.tick', 3600);
    let ran = 0;
    r.register('t.quick', async () => {
      ran++;
      return {};
    });
    let sweeps = 0;
    const enqueue = r.queue.enqueue.bind(r.queue);
    r.queue.enqueue = async (db, job) => {
      if (job.kind === 't.tick') sweeps++;
      return enqueue(db, job);
    };
    r.start();
    try {
      // Ten wakes, as a fan-out's auto-update queuing renders makes hundreds: each ran every
      // periodic kind's (deduplicated) insert again.
      for (let n = 1; n <= 10; n++) {
        await r.queue.enqueue(h.database.db, { kind: 't.quick', payload: { n } });
        await waitFor(`quick job ${n} run`, () => ran === n, { intervalMs: 0 });
      }
    } finally {
      await r.stop();
    }
    assert.equal(sweeps, 1, 'the pass at start, none on the ten wakes (the poll is a minute)');
  });

  test('a job enqueued in a transaction that rolls back does not exist', async () => {
    const r = runner('w4');
    let ran = 0;
    r.register('t.rollback', async () => {
      ran++;
      return {};
    });
    await assert.rejects(
      h.database.db.transaction().execute(async (trx) => {
        await r.queue.enqueue(trx, { kind: 't.rollback', payload: null });
        throw new Error('abort');
      }),
    );
    await r.runDue();
    assert.equal(ran, 0);
  });

  test('start() picks work up without being driven, and stop() waits for the job in hand', async () => {
    const r = runner('w5');
    let finished = false;
    r.register('t.slow', async () => {
      await new Promise((res) => setTimeout(res, 50));
      finished = true;
      return {};
    });
    r.start();
    await r.queue.enqueue(h.database.db, { kind: 't.slow', payload: null });
    const started = Date.now();
    while (!finished && Date.now() - started < 5000) await new Promise((res) => setTimeout(res, 5));
    await r.stop();
    assert.ok(finished);
  });

  test('a started runner keeps its other slots working while one job runs long: jobs enqueued after it run before it ends', async () => {
    const r = runner('w-long', { concurrency: 2 });
    let entered!: () => void;
    const running = new Promise<void>((res) => (entered = res));
    let unblock!: () => void;
    const blocked = new Promise<void>((res) => (unblock = res));
    r.register('t.long', async () => {
      entered();
      await blocked;
      return {};
    });
    const quick: number[] = [];
    r.register('t.quick', async (job) => {
      quick.push((job.payload as { n: number }).n);
      return {};
    });
    r.start();
    try {
      await r.queue.enqueue(h.database.db, { kind: 't.long', payload: null });
      await running;
      // Enqueued one after another while the long job holds a slot: each must run in the other.
      for (let n = 1; n <= 3; n++) {
        await r.queue.enqueue(h.database.db, { kind: 't.quick', payload: { n } });
        await waitFor(`quick job ${n} run beside the long one`, async () => quick.includes(n), { timeoutMs: 5000 });
      }
    } finally {
      unblock();
      await r.stop();
    }
    assert.deepEqual(quick, [1, 2, 3]);
  });

  /** A runner (60 s lease) running one `t.stuck` job that ends, with `result`, only when unblocked. */
  async function stuckJob(name: string, result: Record<string, unknown>) {
    const r = runner(name, { leaseMs: 60_000 });
    let entered!: () => void;
    const running = new Promise<void>((res) => (entered = res));
    let unblock!: () => void;
    r.register('t.stuck', async () => {
      entered();
      await new Promise<void>((res) => (unblock = res));
      return result;
    });
    const id = (await r.queue.enqueue(h.database.db, { kind: 't.stuck', payload: null }))!;
    const first = r.runDue();
    await running;
    return { r, id, first, unblock };
  }

  test('stop() returns only once release() has given every job back: the shutdown closes the database right after it', async () => {
    const { r, id, first, unblock } = await stuckJob('w-releasing', {});
    // A release that takes a while (PostgreSQL under load: a round trip per job).
    const original = jobStore.release;
    jobStore.release = async (...args: Parameters<typeof original>) => {
      await new Promise((res) => setTimeout(res, 300));
      return original(...args);
    };
    const order: string[] = [];
    try {
      const stopping = r.stop().then(() => order.push('stopped'));
      const releasing = r.release().then(() => order.push('released'));
      await Promise.all([stopping, releasing]);
    } finally {
      jobStore.release = original;
      unblock();
      await first;
    }
    assert.deepEqual(order, ['released', 'stopped']);
    assert.equal((await jobStore.get(h.database.db, id))!.state, 'queued');
    // Run to its end by another worker, so no later test's runner claims it.
    const other = runner('w-after-release');
    other.register('t.stuck', async () => ({}));
    assert.equal(await other.runDue(), 1);
  });

  test('release() gives a job still running back to the queue at once: stop() returns, another worker runs it, the attempt not counted', async () => {
    const { r, id, first, unblock } = await stuckJob('w-stopping', { by: 'the stopping worker' });
    const stopping = r.stop();
    assert.deepEqual(await r.release(), [id]);
    await stopping;
    // A claim of the stopping worker still under way gives the job straight back too.
    const row = await waitFor('the job back in the queue', async () => {
      const got = (await jobStore.get(h.database.db, id))!;
      return got.state === 'queued' ? got : null;
    });
    assert.equal(row.locked_by, null);
    assert.equal(row.attempts, 0, 'its one attempt is still there');
    // Another worker takes it now, long before the 60 s lease would have run out.
    const other = runner('w-other');
    other.register('t.stuck', async () => ({ by: 'the other worker' }));
    assert.equal(await other.runDue(), 1);
    assert.equal((await jobStore.get(h.database.db, id))!.state, 'succeeded');
    // The abandoned handler ending later changes nothing: the job is no longer its worker's.
    unblock();
    await first;
    assert.equal((await jobStore.get(h.database.db, id))!.locked_by, null);
    assert.equal((await jobStore.get(h.database.db, id))!.state, 'succeeded');
  });
});

/** A handler that holds its job until `release(n)`, counting the jobs it holds at once. */
function holding() {
  const held = new Map<number, () => void>();
  const ran: number[] = [];
  let most = 0;
  return {
    ran,
    held,
    most: () => most,
    handler: async (job: { payload: { n: number } }) => {
      ran.push(job.payload.n);
      await new Promise<void>((resolve) => {
        held.set(job.payload.n, resolve);
        most = Math.max(most, held.size);
      });
      held.delete(job.payload.n);
      return {};
    },
    release(n: number) {
      held.get(n)?.();
    },
    releaseAll() {
      for (const resolve of [...held.values()]) resolve();
    },
  };
}

describe('job pools (slots of their own) and the share of a group', () => {
  test("runDue runs a job that a job of another pool queued, once that pool's slots had found nothing due", async (t) => {
    const r = runner('w-rundue-pools', { pools: [{ name: 'p', kinds: ['t.pooled'], concurrency: 1 }] });
    const ran: string[] = [];
    r.register('t.pooled', async () => {
      ran.push('pooled');
      return {};
    });
    // The pool's slot finds nothing due (its claim answers null) and ends before the quick job
    // queues the pooled one: a second pass must find it.
    const claim = jobStore.claim;
    let poolFoundNothing = false;
    jobStore.claim = async (...args: Parameters<typeof claim>) => {
      const job = await claim(...args);
      if (!job && args[5].includes('t.pooled')) poolFoundNothing = true;
      return job;
    };
    t.after(() => {
      jobStore.claim = claim;
    });
    r.register('t.quick', async () => {
      await waitFor("the pool's slot finding nothing due", () => poolFoundNothing, { intervalMs: 0 });
      await r.queue.enqueue(h.database.db, { kind: 't.pooled', payload: {} });
      ran.push('quick');
      return {};
    });
    await r.queue.enqueue(h.database.db, { kind: 't.quick', payload: {} });
    assert.equal(await r.runDue(), 2);
    assert.deepEqual(ran, ['quick', 'pooled']);
  });

  /** Runs `kind`'s due jobs in a pool of one slot with a share, and answers their groups in the order they ran. */
  async function runInOrder(kind: string, workerId: string): Promise<string[]> {
    const r = runner(workerId, { pools: [{ name: 'p', kinds: [kind], concurrency: 1, perGroup: 1 }] });
    const order: string[] = [];
    r.register(kind, async (job) => {
      order.push((job.payload as { g: string }).g);
      return {};
    });
    await r.runDue();
    return order;
  }

  test("a pool with a share claims in turn across groups: a group's one job queued after another's 50 runs second, not 51st", async () => {
    const kind = 't.fair-burst';
    for (let n = 0; n < 50; n++) await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { g: 'big' }, group: 'big' }, 1);
    await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { g: 'small' }, group: 'small' }, 1);
    const order = await runInOrder(kind, 'w-fair-burst');
    assert.equal(order.length, 51);
    assert.equal(order.indexOf('small'), 1, 'after the big one first queued, before its 49 others');
  });

  test('groups whose jobs were queued one group after another run one job of each in turn', async () => {
    const kind = 't.fair-turns';
    for (const g of ['a', 'b', 'c']) for (let n = 0; n < 4; n++) await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { g }, group: g }, 1);
    assert.deepEqual(await runInOrder(kind, 'w-fair-turns'), ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  test('a group that comes late takes the turn under way: it gets no credit for the turns it was idle', async () => {
    const kind = 't.fair-late';
    for (let n = 0; n < 8; n++) await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { g: 'early' }, group: 'early' }, 1);
    // Four of them ran; the fifth is running when the late group's jobs are queued.
    for (let n = 0; n < 4; n++) {
      const job = (await jobStore.claim(h.database.db, h.database.engine, 'w-before', h.clock.nowMs(), 60_000, [kind], [], 'fair'))!;
      assert.ok(await jobStore.finish(h.database.db, job.id, 'w-before', h.clock.nowMs(), { state: 'succeeded' }, null));
    }
    const fifth = (await jobStore.claim(h.database.db, h.database.engine, 'w-before', h.clock.nowMs(), 60_000, [kind], [], 'fair'))!;
    for (let n = 0; n < 3; n++) await jobStore.insert(h.database.db, h.clock.nowMs(), { kind, payload: { g: 'late' }, group: 'late' }, 1);
    assert.ok(await jobStore.finish(h.database.db, fifth.id, 'w-before', h.clock.nowMs(), { state: 'succeeded' }, null));
    assert.deepEqual(await runInOrder(kind, 'w-fair-late'), ['late', 'early', 'late', 'early', 'late', 'early']);
  });

  test("a pool's kinds run only in its slots, at most its concurrency at once, and its slots run nothing else; a full default pool holds them back in nothing", async () => {
    const r = runner('w-pools', { concurrency: 1, pools: [{ name: 'p', kinds: ['t.pooled'], concurrency: 2 }] });
    const pooled = holding();
    const long = holding();
    const quick: number[] = [];
    r.register('t.pooled', pooled.handler);
    r.register('t.long', long.handler);
    r.register('t.quick', async (job) => {
      quick.push((job.payload as { n: number }).n);
      return {};
    });
    r.start();
    try {
      // The one default slot is held by a long job: the pool's jobs still run, two at once.
      await r.queue.enqueue(h.database.db, { kind: 't.long', payload: { n: 0 } });
      await waitFor('the long job in the default slot', () => long.held.size === 1);
      for (let n = 1; n <= 3; n++) await r.queue.enqueue(h.database.db, { kind: 't.pooled', payload: { n } });
      await waitFor("two of the pool's jobs running beside the long one", () => pooled.held.size === 2);
      // A quick job queued behind the third pooled one: the pool's free... none is free, and the
      // default slot is held; once the long job ends, the default slot takes the quick job and
      // never the pooled one queued before it.
      await r.queue.enqueue(h.database.db, { kind: 't.quick', payload: { n: 1 } });
      long.release(0);
      await waitFor('the quick job, in the default slot', () => quick.includes(1));
      assert.equal(pooled.held.size, 2, "the default slot did not take the pool's third job, queued before the quick one");
      assert.deepEqual(pooled.ran.sort(), [1, 2], 'the third waits for a slot of its pool');
      // The pool's slots take no other kind: a quick job queued while the default slot is held
      // again stays queued while the pool claims (and runs) a job queued after it.
      await r.queue.enqueue(h.database.db, { kind: 't.long', payload: { n: 9 } });
      await waitFor('the default slot held again', () => long.held.size === 1);
      await r.queue.enqueue(h.database.db, { kind: 't.quick', payload: { n: 2 } });
      pooled.release(1);
      await waitFor("the pool's third job, once a slot of the pool is free", () => pooled.ran.includes(3));
      await r.queue.enqueue(h.database.db, { kind: 't.pooled', payload: { n: 4 } });
      pooled.release(2);
      await waitFor("a pooled job queued after the quick one, run by the pool's slots", () => pooled.ran.includes(4));
      assert.ok(!quick.includes(2), "the pool's slots did not take the quick job queued before it");
      assert.equal(pooled.most(), 2, "never more than the pool's two slots at once");
    } finally {
      pooled.releaseAll();
      long.releaseAll();
      await waitFor('the last quick job', () => quick.includes(2));
      await r.stop();
    }
  });

  test("one group holds at most its share of a pool's slots: another group's job queued behind its jobs runs at once; jobs of no group are not limited", async () => {
    const r = runner('w-share', { pools: [{ name: 'shared', kinds: ['t.grouped'], concurrency: 4, perGroup: 2 }] });
    const jobs = holding();
    const groupOf = new Map<number, string | null>();
    r.register('t.grouped', jobs.handler);
    const enqueue = async (n: number, group: string | null) => {
      groupOf.set(n, group);
      await r.queue.enqueue(h.database.db, { kind: 't.grouped', payload: { n }, group });
    };
    for (let n = 1; n <= 6; n++) await enqueue(n, 'wks_a');
    await enqueue(7, 'wks_b');
    r.start();
    try {
      await waitFor("group b's job, queued behind six of group a's", () => jobs.ran.includes(7));
      const heldOf = (g: string | null) => [...jobs.held.keys()].filter((n) => groupOf.get(n) === g).length;
      assert.equal(heldOf('wks_a'), 2, 'group a holds its share (2 of 4), not the whole pool');
      // As group a's jobs end, its next ones take their place, never more than two at once.
      let mostOfA = 0;
      for (let n = 1; n <= 6; n++) {
        await waitFor(`group a's job ${n}`, () => jobs.held.has(n));
        mostOfA = Math.max(mostOfA, heldOf('wks_a'));
        jobs.release(n);
      }
      assert.equal(mostOfA, 2);
      // Jobs of no group: the pool's whole concurrency.
      jobs.release(7);
      for (let n = 8; n <= 11; n++) await enqueue(n, null);
      await waitFor('four jobs of no group at once', () => heldOf(null) === 4);
    } finally {
      jobs.releaseAll();
      await r.stop();
      jobs.releaseAll();
    }
    assert.deepEqual(
      jobs.ran.sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
  });

  test('runDue runs every due job of a pool with a share too, each group at most its share at once', async () => {
    const r = runner('w-share-due', { pools: [{ name: 'shared', kinds: ['t.grouped'], concurrency: 3, perGroup: 1 }] });
    const running = new Map<string, number>();
    let most = 0;
    let ran = 0;
    r.register('t.grouped', async (job) => {
      const g = (job.payload as { g: string }).g;
      running.set(g, (running.get(g) ?? 0) + 1);
      most = Math.max(most, running.get(g)!);
      await new Promise((res) => setTimeout(res, 5));
      running.set(g, running.get(g)! - 1);
      ran++;
      return {};
    });
    for (let n = 0; n < 9; n++) await r.queue.enqueue(h.database.db, { kind: 't.grouped', payload: { g: n % 3 === 0 ? 'b' : 'a' }, group: n % 3 === 0 ? 'b' : 'a' });
    assert.equal(await r.runDue(), 9);
    assert.equal(ran, 9);
    assert.equal(most, 1, 'one job of a group at a time');
  });

  test('a kind in two pools, or a pool without a slot, is refused at once', () => {
    assert.throws(
      () =>
        runner('w-bad', {
          pools: [
            { name: 'a', kinds: ['t.pooled'], concurrency: 1 },
            { name: 'b', kinds: ['t.pooled'], concurrency: 1 },
          ],
        }),
      /t\.pooled is in two pools/,
    );
    assert.throws(() => runner('w-bad', { pools: [{ name: 'a', kinds: ['t.pooled'], concurrency: 0 }] }), /at least one slot/);
    assert.throws(() => runner('w-bad', { pools: [{ name: 'a', kinds: ['t.pooled'], concurrency: 2, perGroup: 0 }] }), /at least one slot/);
  });
});

describe('GET /v1/operations/{id}', () => {
  test("another workspace's operation is 404 7002; an over-long id is 422", async () => {
    const op = await startOperation(h.database.db, h.clock, s.workspaceId, 't.any');
    const other = await h.seed('Other');
    const res = await h.app.inject({ method: 'GET', url: `/v1/operations/${op}`, headers: as(other.apiToken) });
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    const bare = await h.app.inject({ method: 'GET', url: `/v1/operations/${op.slice(3)}`, headers: as(s.apiToken) });
    assert.equal(bare.statusCode, 200);
    assert.equal(bare.json().done, false);
    const long = await h.app.inject({ method: 'GET', url: `/v1/operations/${'x'.repeat(65)}`, headers: as(s.apiToken) });
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
  });
});

describe('waiting without failing', () => {
  test('RetryLaterError queues the job for the given time and does not count the attempt', async () => {
    const { RetryLaterError } = await import('../../src/jobs/failure.js');
    const r = runner('w-wait');
    let calls = 0;
    r.register('t.wait', async () => {
      calls++;
      if (calls <= 3) throw new RetryLaterError('rate limited', h.clock.nowMs() + 30_000);
      return { ok: true };
    });
    const id = (await r.queue.enqueue(h.database.db, { kind: 't.wait', payload: null }))!;
    for (let i = 0; i < 3; i++) {
      assert.equal(await r.runDue(), 1);
      const row = (await jobStore.get(h.database.db, id))!;
      assert.equal(row.attempts, 0, 'waiting is not an attempt');
      assert.equal(await r.runDue(), 0, 'not before the time it was told');
      h.clock.advanceSeconds(30);
    }
    assert.equal(await r.runDue(), 1);
    assert.equal((await jobStore.get(h.database.db, id))!.state, 'succeeded', 'one attempt allowed, and it was the only real one');
    assert.equal(calls, 4);
  });
});
