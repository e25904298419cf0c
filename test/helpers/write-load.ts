import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/tables.js';
import { api } from './processes.js';
import { LoadTally } from '../faults/report.js';

/**
 * A write load for database fault tests: `clients` lanes, each creating API tokens and secret
 * versions one after another, every request with an Idempotency-Key of its own and a name (or
 * comment) that is that key, so its effect can be counted in the database afterwards.
 * An answer is acknowledged (2xx), unacknowledged (503 7054 with Retry-After: the database could
 * not answer; or the connection failed) or unexpected (anything else: the test fails).
 */
export interface Write {
  kind: 'token' | 'version';
  key: string;
  path: string;
  body: Record<string, string>;
  status: number | string;
  id?: string;
  /** Its retry was answered 409 7055: the first attempt took effect, its answer lost (its id unknown). */
  answerLost?: boolean;
}

type Answer = Awaited<ReturnType<typeof api>>;

/** What both loads share: their lanes, what they saw, and how one request is timed and its 503 judged. */
abstract class LaneLoad<T> {
  readonly tally = new LoadTally();
  readonly acked: T[] = [];
  readonly unacked: T[] = [];
  readonly unexpected: string[] = [];
  /** 503 answers without `Retry-After: 5` or without code 7054. */
  readonly badUnavailable: string[] = [];
  protected running = false;
  private lanes: Promise<void>[] = [];

  protected startLanes(lanes: (() => Promise<void>)[]): void {
    this.running = true;
    this.lanes.push(...lanes.map((lane) => lane()));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
    this.lanes = [];
  }

  /** One request, timed into the tally; a failed connection is its status (a string), a 503 must be the database's (7054, Retry-After: 5). */
  protected async timed(label: string, send: () => Promise<Answer>): Promise<{ status: number | string; code?: number; res?: Answer }> {
    const started = performance.now();
    try {
      const res = await send();
      const code = res.body?.errors?.[0]?.code as number | undefined;
      this.tally.record(res.status, performance.now() - started, res.status >= 400 ? code : undefined);
      if (res.status === 503 && (code !== 7054 || res.headers.get('retry-after') !== '5'))
        this.badUnavailable.push(`${label}: ${res.status} retry-after=${res.headers.get('retry-after')} ${res.text.slice(0, 200)}`);
      return { status: res.status, ...(code === undefined ? {} : { code }), res };
    } catch (err) {
      this.tally.record('network error', performance.now() - started);
      return { status: `network error: ${(err as Error).message}` };
    }
  }
}

export class WriteLoad extends LaneLoad<Write> {
  private counter = 0;
  /** The error code of the last answer `send` saw. */
  private lastCode: number | undefined;

  constructor(
    private readonly base: () => string,
    private readonly credential: string,
    private readonly workspaceId: string,
    private readonly secretId: string,
  ) {
    super();
  }

  /** One request of the load, classified; resolves with its status. */
  async send(w: Write): Promise<Write> {
    const { status, code, res } = await this.timed(w.path, () =>
      api(this.base(), 'POST', w.path, { credential: this.credential, workspaceId: this.workspaceId, body: w.body, headers: { 'idempotency-key': w.key }, retry: false }),
    );
    w.status = status;
    if (!res) return w;
    this.lastCode = code;
    if (status === 201) w.id = res.body.id;
    else if (status !== 503 && !(status === 409 && (code === 7031 || code === 7055 || (code === 7033 && w.kind === 'token'))))
      this.unexpected.push(`${w.kind} ${w.key}: ${status} ${res.text.slice(0, 300)}`);
    return w;
  }

  next(kind: 'token' | 'version'): Write {
    const key = `load-${++this.counter}-${randomUUID().slice(0, 8)}`;
    return kind === 'token'
      ? { kind, key, path: '/v1/api_tokens', body: { name: key }, status: 'unsent' }
      : { kind, key, path: `/v1/secrets/${this.secretId}/versions`, body: { data: Buffer.from(`payload of ${key}`).toString('base64'), comment: key }, status: 'unsent' };
  }

  start(clients: number): void {
    this.startLanes(
      Array.from({ length: clients }, (_, i) => async () => {
        for (let n = 0; this.running; n++) {
          const w = await this.send(this.next((i + n) % 2 === 0 ? 'token' : 'version'));
          (w.status === 201 ? this.acked : this.unacked).push(w);
        }
      }),
    );
  }

  /**
   * Sends every unacknowledged request again with its own key and body until it is answered
   * 201 (a first attempt that did commit is replayed; 409 7031 while its claim is being settled
   * is waited out) or 409 7055 (the first attempt committed and its answer was lost: it is not
   * carried out again). Returns how many retries were needed in all.
   */
  async retryUnacked(timeoutMs = 60_000): Promise<number> {
    let retries = 0;
    const deadline = Date.now() + timeoutMs;
    for (const w of this.unacked) {
      for (;;) {
        retries++;
        const again = await this.send({ ...w, status: 'retry' });
        if (again.status === 201) {
          w.id = again.id;
          break;
        }
        // 7055: the first attempt committed, its answer lost. 7033: a token made under this key,
        // answered already (its secret is shown once only), the answer lost on the way.
        if (again.status === 409 && (this.lastCode === 7055 || this.lastCode === 7033)) {
          w.answerLost = true;
          break;
        }
        assert.ok(Date.now() < deadline, `the retry of ${w.kind} ${w.key} never succeeded: last ${again.status} (${this.lastCode ?? 'no code'})`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    return retries;
  }

  /**
   * Looks in the database: every acknowledged write is there (returns how many are missing:
   * lost); every request, acknowledged or retried, had exactly one effect (one row named by its
   * key, the id its answer gave, or any one when its answer was lost: 409 7055); every row has
   * its one event and no event names a missing row.
   */
  async check(db: Kysely<DB>): Promise<{ lost: number; twice: number; answersLost: number }> {
    const tokens = await db.selectFrom('api_tokens').select(['id', 'name']).where('name', 'like', 'load-%').execute();
    const versions = await db.selectFrom('secret_versions').select(['id', 'comment']).where('secret_id', '=', this.secretId).where('comment', 'like', 'load-%').execute();
    const rows = new Map<string, string[]>();
    for (const t of tokens) rows.set(t.name, [...(rows.get(t.name) ?? []), t.id]);
    for (const v of versions) rows.set(v.comment!, [...(rows.get(v.comment!) ?? []), v.id]);
    const lost = this.acked.filter((w) => !rows.get(w.key)?.includes(w.id!));
    assert.deepEqual(
      lost.map((w) => w.key),
      [],
      'acknowledged writes missing',
    );
    const twice = [...rows].filter(([, ids]) => ids.length > 1);
    assert.deepEqual(twice, [], 'requests with more than one effect');
    for (const w of [...this.acked, ...this.unacked]) {
      const ids = rows.get(w.key) ?? [];
      if (w.answerLost) assert.equal(ids.length, 1, `${w.kind} ${w.key}: answered 7055, so its first attempt took effect once`);
      else assert.deepEqual(ids, [w.id], `${w.kind} ${w.key}: its one effect is the one its answer named`);
    }
    const sameSet = async (type: string, ids: string[]) => {
      const recorded = (await db.selectFrom('events').select('resource_id').where('type', '=', type).execute()).map((e) => e.resource_id);
      const ours = new Set(ids);
      const mine = recorded.filter((id) => id !== null && ours.has(id));
      assert.deepEqual([...mine].sort(), [...ids].sort(), `${type}: one event for each change that committed`);
      return recorded;
    };
    await sameSet(
      'api_token.created',
      tokens.map((t) => t.id),
    );
    await sameSet(
      'secret_version.created',
      versions.map((v) => v.id),
    );
    // No event without its change: every event's resource exists.
    const tokenIds = new Set((await db.selectFrom('api_tokens').select('id').execute()).map((r) => r.id));
    const versionIds = new Set((await db.selectFrom('secret_versions').select('id').execute()).map((r) => r.id));
    const orphans = (await db.selectFrom('events').select(['type', 'resource_id']).where('type', 'in', ['api_token.created', 'secret_version.created']).execute()).filter(
      (e) => !(e.type === 'api_token.created' ? tokenIds : versionIds).has(e.resource_id),
    );
    assert.deepEqual(orphans, [], 'events whose change is not there');
    return { lost: lost.length, twice: twice.length, answersLost: this.unacked.filter((w) => w.answerLost).length };
  }
}

/** One PATCH of a dashboard by a PatchLoad lane: its key, the If-Match it sent, its name (the key). */
interface Patch {
  dashboardId: string;
  key: string;
  ifMatch: string;
  status: number | string;
  /** The revision its answer named (200). */
  revisionId?: string;
  /** Answered 409 7055 on a retry: it took effect, its answer lost. */
  answerLost?: boolean;
  /** Answered 409 7030 on a retry: the dashboard had moved on without it, so it never took effect. */
  refused?: boolean;
}

/**
 * Conditional writes under a database fault: one lane per dashboard reads it and PATCHes its name
 * with If-Match and an Idempotency-Key, again and again. Nothing else writes those dashboards, so
 * a 409 7030 (the etag moved) can only come from a request of the lane's own that committed
 * while its answer was lost. Afterwards each unacknowledged PATCH is retried with its key, body
 * and If-Match, and the revisions and events are checked against what was answered.
 */
export class PatchLoad extends LaneLoad<Patch> {
  constructor(
    private readonly base: () => string,
    private readonly credential: string,
    private readonly workspaceId: string,
    private readonly dashboardIds: string[],
  ) {
    super();
  }

  private async patch(p: Patch): Promise<{ status: number | string; code?: number; body?: any }> {
    const { res, ...answer } = await this.timed('PATCH', () =>
      api(this.base(), 'PATCH', `/v1/dashboards/${p.dashboardId}`, {
        credential: this.credential,
        workspaceId: this.workspaceId,
        body: { name: p.key },
        headers: { 'if-match': p.ifMatch, 'idempotency-key': p.key },
        retry: false,
      }),
    );
    return res ? { ...answer, body: res.body } : answer;
  }

  start(): void {
    this.startLanes(
      this.dashboardIds.map((dashboardId) => async () => {
        // The etag of the lane's last 200; read again after any other answer.
        let etag: string | null = null;
        while (this.running) {
          if (etag === null) {
            const now = await api(this.base(), 'GET', `/v1/dashboards/${dashboardId}`, { credential: this.credential, workspaceId: this.workspaceId, retry: false }).catch(() => null);
            if (now?.status !== 200) {
              await new Promise((r) => setTimeout(r, 100));
              continue;
            }
            etag = now.body.etag as string;
          }
          const p: Patch = { dashboardId, key: `patch-${randomUUID()}`, ifMatch: etag, status: 'unsent' };
          const res = await this.patch(p);
          p.status = res.status;
          etag = null;
          if (res.status === 200) {
            p.revisionId = res.body.current_revision_id;
            etag = res.body.etag;
            this.acked.push(p);
          } else if (res.status === 503 || typeof res.status === 'string') this.unacked.push(p);
          // A 409 7030 here means an earlier PATCH of this lane committed though its answer was lost: it is in unacked, checked below.
          else if (!(res.status === 409 && res.code === 7030)) this.unexpected.push(`PATCH ${p.key}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        }
      }),
    );
  }

  /** Retries each unacknowledged PATCH with its key, body and If-Match until it is answered for good. */
  async retryUnacked(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const p of this.unacked) {
      for (;;) {
        const res = await this.patch(p);
        if (res.status === 200) {
          p.revisionId = res.body.current_revision_id;
          break;
        }
        if (res.status === 409 && res.code === 7055) {
          p.answerLost = true;
          break;
        }
        if (res.status === 409 && res.code === 7030) {
          p.refused = true;
          break;
        }
        assert.ok(Date.now() < deadline, `the retry of PATCH ${p.key} never got an answer: last ${res.status} ${res.code ?? ''}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /**
   * In the database: each PATCH that took effect (acknowledged, replayed on retry, or answered
   * 7055) made exactly one revision named by its key, the one its answer named; a refused one
   * made none; every revision after a dashboard's first has its one dashboard.updated event
   * naming it, and no event names a revision that is not there; each dashboard's current revision
   * is its newest.
   */
  async check(db: Kysely<DB>): Promise<{ lost: number; effects: number }> {
    const revisions = await db.selectFrom('dashboard_revisions').select(['id', 'dashboard_id', 'name', 'seq']).where('dashboard_id', 'in', this.dashboardIds).execute();
    const byName = new Map<string, string[]>();
    for (const r of revisions) byName.set(r.name, [...(byName.get(r.name) ?? []), r.id]);
    const lost = this.acked.filter((p) => !byName.get(p.key)?.includes(p.revisionId!));
    assert.deepEqual(
      lost.map((p) => p.key),
      [],
      'acknowledged PATCHes missing',
    );
    for (const p of [...this.acked, ...this.unacked]) {
      const ids = byName.get(p.key) ?? [];
      if (p.refused) assert.deepEqual(ids, [], `PATCH ${p.key}: refused on retry (7030), so it never took effect`);
      else if (p.answerLost) assert.equal(ids.length, 1, `PATCH ${p.key}: answered 7055, so it took effect once`);
      else assert.deepEqual(ids, [p.revisionId], `PATCH ${p.key}: its one revision is the one its answer named`);
    }
    const patched = revisions.filter((r) => r.seq > 1);
    const events = await db.selectFrom('events').select(['resource_id', 'data']).where('type', '=', 'dashboard.updated').where('resource_id', 'in', this.dashboardIds).execute();
    const named = events.map((e) => (JSON.parse(e.data) as { revision_id: string }).revision_id).sort();
    assert.deepEqual(named, patched.map((r) => r.id).sort(), 'dashboard.updated: one per revision made by a PATCH, none without its revision');
    const heads = await db.selectFrom('dashboards').select(['id', 'current_revision_id']).where('id', 'in', this.dashboardIds).execute();
    for (const h of heads) {
      const newest = revisions.filter((r) => r.dashboard_id === h.id).sort((a, b) => b.seq - a.seq)[0]!;
      assert.equal(h.current_revision_id, newest.id, `dashboard ${h.id}: its current revision is its newest`);
    }
    return { lost: lost.length, effects: patched.length };
  }
}
