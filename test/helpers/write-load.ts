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

export class WriteLoad {
  readonly tally = new LoadTally();
  readonly acked: Write[] = [];
  readonly unacked: Write[] = [];
  readonly unexpected: string[] = [];
  /** 503 answers without `Retry-After` or without code 7054. */
  readonly badUnavailable: string[] = [];
  private running = false;
  private lanes: Promise<void>[] = [];
  private counter = 0;
  /** The error code of the last answer `send` saw. */
  private lastCode: number | undefined;

  constructor(
    private readonly base: () => string,
    private readonly credential: string,
    private readonly workspaceId: string,
    private readonly secretId: string,
  ) {}

  /** One request of the load, classified; resolves with its status. */
  async send(w: Write): Promise<Write> {
    const started = performance.now();
    try {
      const res = await api(this.base(), 'POST', w.path, { credential: this.credential, workspaceId: this.workspaceId, body: w.body, headers: { 'idempotency-key': w.key } });
      const code = res.body?.errors?.[0]?.code as number | undefined;
      this.lastCode = code;
      this.tally.record(res.status, performance.now() - started, res.status >= 400 ? code : undefined);
      w.status = res.status;
      if (res.status === 201) w.id = res.body.id;
      else if (res.status === 503) {
        if (code !== 7054 || res.headers.get('retry-after') !== '5') this.badUnavailable.push(`${w.path}: ${res.status} retry-after=${res.headers.get('retry-after')} ${res.text.slice(0, 200)}`);
      } else if (!(res.status === 409 && (code === 7031 || code === 7055))) this.unexpected.push(`${w.kind} ${w.key}: ${res.status} ${res.text.slice(0, 300)}`);
    } catch (err) {
      this.tally.record('network error', performance.now() - started);
      w.status = `network error: ${(err as Error).message}`;
    }
    return w;
  }

  next(kind: 'token' | 'version'): Write {
    const key = `load-${++this.counter}-${randomUUID().slice(0, 8)}`;
    return kind === 'token'
      ? { kind, key, path: '/v1/api_tokens', body: { name: key }, status: 'unsent' }
      : { kind, key, path: `/v1/secrets/${this.secretId}/versions`, body: { data: Buffer.from(`payload of ${key}`).toString('base64'), comment: key }, status: 'unsent' };
  }

  start(clients: number): void {
    this.running = true;
    for (let i = 0; i < clients; i++) {
      this.lanes.push(
        (async () => {
          for (let n = 0; this.running; n++) {
            const w = await this.send(this.next((i + n) % 2 === 0 ? 'token' : 'version'));
            (w.status === 201 ? this.acked : this.unacked).push(w);
          }
        })(),
      );
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
    this.lanes = [];
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
        if (again.status === 409 && this.lastCode === 7055) {
          w.answerLost = true;
          break;
        }
        assert.ok(Date.now() < deadline, `the retry of ${w.kind} ${w.key} never succeeded: last ${again.status}`);
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
    assert.deepEqual(lost.map((w) => w.key), [], 'acknowledged writes missing');
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
    await sameSet('api_token.created', tokens.map((t) => t.id));
    await sameSet('secret_version.created', versions.map((v) => v.id));
    // No event without its change: every event's resource exists.
    const tokenIds = new Set((await db.selectFrom('api_tokens').select('id').execute()).map((r) => r.id));
    const versionIds = new Set((await db.selectFrom('secret_versions').select('id').execute()).map((r) => r.id));
    const orphans = (await db.selectFrom('events').select(['type', 'resource_id']).where('type', 'in', ['api_token.created', 'secret_version.created']).execute()).filter(
      (e) => !(e.type === 'api_token.created' ? tokenIds : versionIds).has(e.resource_id!),
    );
    assert.deepEqual(orphans, [], 'events whose change is not there');
    return { lost: lost.length, twice: twice.length, answersLost: this.unacked.filter((w) => w.answerLost).length };
  }
}
