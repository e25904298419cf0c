/**
 * Issue 54, target 4 (growth): one workspace holding 10^6 audit events, 10^5 secrets, 10^4
 * installs (two renders each) and 10^3 members, beside an empty one that the same owner's session
 * reads. Every list page (the first and a later one, through its cursor), every filter of the
 * audit log and of the caller's own /v1/me/events, the platform-metrics series over 30 days and
 * the quotas' answer are read from the real server, big and empty alternated one request at a
 * time; each row gives both p50s and their ratio (target ≤ 2).
 *
 * The rows are written straight into the database (the API would take hours for 10^6 events):
 * each kind is cloned from a row the API made (a secret and its version, an install and its
 * render), with its own id (time-ordered over 35 days, as the server's ids are), name and times,
 * so every row is one the server could have written. Its own database (a data directory; on
 * PostgreSQL a database of the bench's server), so no other scenario reads 10^6 events.
 * WSP_BENCH_GROWTH_KEEP=1 keeps the grown database; WSP_BENCH_GROWTH_ONLY=TEXT measures only the
 * rows whose route contains TEXT.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freePort, startServer, wspCommand, type Server } from './lib/processes.js';
import { median } from './lib/load.js';
import type { Row } from './lib/row.js';
import { bearer, installRendered, json, must, packageWith, type Api } from './lib/seed.js';
import { idFloor, type IdPrefix } from '../src/shared/ids.js';
import { RENDER_PREFIX_BACKFILL } from '../src/db/migrations/0034_render_prefix.js';
import { machineLifeBackfill } from '../src/db/migrations/0035_machine_life_prefix.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPE_NAMES, resourceTypeOf, type EventType } from '../src/events/event-type-schemas.js';

const SCALE = Number(process.env.WSP_BENCH_GROWTH_SCALE ?? 1);
const N_EVENTS = Math.round(1_000_000 * SCALE);
const N_SECRETS = Math.round(100_000 * SCALE);
const N_INSTALLS = Math.round(10_000 * SCALE);
const N_MEMBERS = Math.round(1_000 * SCALE);
/** Sign-ins (events of no workspace) of each member, and of the owner: what /v1/me/events reads. */
const SIGN_INS_EACH = 50;
const OWNER_SIGN_INS = 2_000;
const DAY = 86_400;
/** The events' and rows' times: the last 35 days (the series reads 30). */
const SPAN_DAYS = 35;

type Value = string | number | null;
type Rec = Record<string, Value>;

/** Bulk rows into one engine's tables: batched inserts in one transaction (SQLite), JSON record sets (PostgreSQL). */
interface Bulk {
  template(table: string, where: string, params: Value[]): Promise<Rec>;
  insert(table: string, rows: Iterable<Rec>): Promise<number>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

function sqliteBulk(file: string): Bulk {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  // The events' five indexes on random keys, each insert a page of each: with SQLite's 2 MB cache
  // most of those pages were read and written again and again (145 s for 10^6 events).
  db.pragma('cache_size = -1000000');
  db.pragma('synchronous = off');
  return {
    async template(table, where, params) {
      const row = db.prepare(`select * from ${table} where ${where}`).get(...params) as Rec | undefined;
      if (!row) throw new Error(`growth: no ${table} where ${where}`);
      return row;
    },
    async insert(table, rows) {
      let n = 0;
      let stmt: Database.Statement | null = null;
      let cols: string[] = [];
      const batch: Rec[] = [];
      const flush = db.transaction((rs: Rec[]) => {
        for (const r of rs) stmt!.run(...cols.map((c) => r[c] ?? null));
      });
      for (const r of rows) {
        if (!stmt) {
          cols = Object.keys(r);
          stmt = db.prepare(`insert into ${table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`);
        }
        batch.push(r);
        if (batch.length === 50_000) {
          flush(batch);
          n += batch.length;
          batch.length = 0;
        }
      }
      if (batch.length) flush(batch);
      return n + batch.length;
    },
    async exec(sql) {
      db.exec(sql);
    },
    async close() {
      db.close();
    },
  };
}

function postgresBulk(url: string): Bulk {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  const numbered = (s: string) => {
    let i = 0;
    return s.replace(/\?/g, () => `$${++i}`);
  };
  return {
    async template(table, where, params) {
      await connected;
      const row = (await client.query(`select * from ${table} where ${numbered(where)}`, params)).rows[0] as Rec | undefined;
      if (!row) throw new Error(`growth: no ${table} where ${where}`);
      return row;
    },
    async insert(table, rows) {
      await connected;
      let n = 0;
      let batch: Rec[] = [];
      const flush = async () => {
        // Every column by name from JSON objects: the table's own types, whatever their order.
        await client.query(`insert into ${table} select * from json_populate_recordset(null::${table}, $1::json)`, [JSON.stringify(batch)]);
        n += batch.length;
        batch = [];
      };
      await client.query('begin');
      for (const r of rows) {
        batch.push(r);
        if (batch.length === 20_000) await flush();
      }
      if (batch.length) await flush();
      await client.query('commit');
      return n;
    },
    async exec(sql) {
      await connected;
      await client.query(sql);
    },
    close: () => client.end(),
  };
}

/** A deterministic generator (mulberry32): the same workspace every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An index in [0, n), the first ones far likelier (a few secrets read all day, a few people doing most). */
const skewed = (rnd: () => number, n: number) => Math.min(n - 1, Math.floor(n * rnd() ** 3));

/** `n` times ascending over the last SPAN_DAYS days (ms), ending a minute before `now`. */
function* spread(n: number, nowMs: number, rnd: () => number): Generator<number> {
  const start = nowMs - SPAN_DAYS * DAY * 1000;
  const width = (SPAN_DAYS * DAY * 1000 - 60_000) / n;
  for (let i = 0; i < n; i++) yield Math.floor(start + i * width + rnd() * width);
}

/**
 * How often each type of a workspace's log happens: secret reads and writes most, installs next,
 * a long tail of types seen a few hundred times or less. The rest of the types share what is left.
 */
const WEIGHTS: Partial<Record<EventType, number>> = {
  'secret_version.accessed': 40,
  'secret_version.created': 12,
  'secret.created': 10,
  'install.updated': 8,
  'dashboard.updated': 5,
  'snippet.updated': 4,
  'install.created': 1,
  'install.restored': 1,
  'api_token.created': 0.5,
  'member.updated': 0.2,
  'webhook_delivery.retried': 0.01,
};
const ACCOUNT: readonly string[] = ACCOUNT_EVENT_TYPES;
const WORKSPACE_TYPES = EVENT_TYPE_NAMES.filter((t) => !ACCOUNT.includes(t) && t !== 'workspace.set_up');

function typePicker(rnd: () => number): () => EventType {
  const rest = WORKSPACE_TYPES.filter((t) => !(t in WEIGHTS));
  const named = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
  // The unnamed types share 2% of the log.
  const table = [...Object.entries(WEIGHTS).map(([t, w]) => [t, w] as const), ...rest.map((t) => [t, 2 / rest.length] as const)];
  const total = named + 2;
  return () => {
    let x = rnd() * total;
    for (const [t, w] of table) if ((x -= w) < 0) return t as EventType;
    return table[0]![0] as EventType;
  };
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const idRandom = random(4);
/**
 * An id as the server makes them, made at `ms` (the server's ulid() is monotonic within a process:
 * asked for an earlier time than its last, it answers a later one).
 */
function idAt(prefix: IdPrefix, ms: number): string {
  let tail = '';
  for (let i = 0; i < 16; i++) tail += CROCKFORD[Math.floor(idRandom() * 32)];
  return idFloor(prefix, ms).slice(0, -16) + tail;
}

const pad = (i: number, w: number) => String(i).padStart(w, '0');
const sec = (ms: number) => Math.floor(ms / 1000);

interface Seeded {
  big: string;
  empty: string;
  owner: { userId: string; session: string };
  loner: { userId: string; session: string };
  /** Ids the filters name: a popular and a rare one of each. */
  ids: { popularSecret: string; rareSecret: string; rareMember: string; install: string; secret: string; cluster: string | null; packageId: string };
  seconds: Record<string, number>;
}

function adminJson(root: string, env: Record<string, string>, args: string[]): Record<string, string> {
  return JSON.parse(execFileSync(process.execPath, [path.join(root, 'bin/wsp.js'), 'admin', ...args, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));
}

/** The templates through the API, then every bulk row cloned from them. */
async function seed(root: string, engine: string, env: Record<string, string>, bulk: Bulk, server: Server): Promise<Seeded> {
  const t0 = performance.now();
  const creds = adminJson(root, env, ['bootstrap']);
  const empty = adminJson(root, env, ['workspace', 'create', '--name', 'growth-empty']).workspace_id!;
  adminJson(root, env, ['member', 'add', '--workspace', empty, '--user', creds.user_id!, '--role', 'owner']);
  const lonerId = adminJson(root, env, ['user', 'create', '--name', 'loner']).user_id!;
  const lonerSession = adminJson(root, env, ['session', 'create', '--user', lonerId]).session_token!;
  const big = creds.workspace_id!;
  const api: Api = async (method, p, headers, body) => {
    const res = await fetch(server.url + p, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const h = { ...bearer(creds.session_token!), 'service-context': big, ...json };
  const secret = await must(api('POST', '/v1/secrets', h, { name: 'growth-template' }), 201);
  await must(api('POST', `/v1/secrets/${secret.id}/versions`, h, { data: Buffer.from('template').toString('base64') }), 201);
  const pkg = await packageWith(api, h, 'growth-pkg', { 'app/config.yaml': 'name: {{name}}\n' });
  const inst = await installRendered(api, h, pkg, 'growth-template', { name: 'template' });
  const clusterRes = await api('POST', '/v1/clusters', h, { name: 'growth', region: 'fsn1' });
  const cluster = clusterRes.status === 201 ? (clusterRes.json.id as string) : null;
  if (!cluster) console.error(`growth: no cluster (${clusterRes.status}); the installs' cluster filter reads none`);
  const tApi = performance.now();
  // SQLite's one writer is the bulk rows' alone from here; the server starts again to be measured.
  await server.stop();

  const nowMs = Date.now();
  const rnd = random(54);
  const seconds: Record<string, number> = { api: (tApi - t0) / 1000 };
  const timed = async (what: string, fn: () => Promise<number>) => {
    const t = performance.now();
    const n = await fn();
    seconds[what] = (performance.now() - t) / 1000;
    console.error(`growth ${engine}: ${n} ${what} in ${seconds[what].toFixed(1)} s`);
  };

  // Members: a user each (no password: nobody signs in as them here), a tenth of them admins.
  const userTpl = await bulk.template('users', 'id = ?', [lonerId]);
  const members = Array.from({ length: N_MEMBERS - 1 }, () => idAt('usr', nowMs - SPAN_DAYS * DAY * 1000));
  await timed('members', async () => {
    await bulk.insert(
      'users',
      members.map((id, i) => ({ ...userTpl, id, name: `Member ${i}`, email: `member-${i}@growth.test`, email_key: `member-${i}@growth.test`, created_at: sec(nowMs) - SPAN_DAYS * DAY })),
    );
    return bulk.insert(
      'memberships',
      members.map((id, i) => ({ workspace_id: big, user_id: id, role: i % 10 === 0 ? 'admin' : 'member', created_at: sec(nowMs) - SPAN_DAYS * DAY + i })),
    );
  });

  // Secrets, one version each.
  const secretTpl = await bulk.template('secrets', 'id = ?', [secret.id]);
  const versionTpl = await bulk.template('secret_versions', 'secret_id = ?', [secret.id]);
  const secretIds: string[] = [];
  const secretMs: number[] = [];
  for (const ms of spread(N_SECRETS, nowMs, rnd)) {
    secretIds.push(idAt('sec', ms));
    secretMs.push(ms);
  }
  await timed('secrets', async () => {
    await bulk.insert(
      'secrets',
      secretIds.map((id, i) => ({ ...secretTpl, id, name: `growth-secret-${pad(i, 6)}`, version_seq: 1, created_at: sec(secretMs[i]!), updated_at: sec(secretMs[i]!) })),
    );
    return bulk.insert(
      'secret_versions',
      secretIds.map((id, i) => ({ ...versionTpl, id: idAt('secv', secretMs[i]!), secret_id: id, version_number: 1, created_at: sec(secretMs[i]!) })),
    );
  });

  // Installs, half on the cluster, each with two renders (ids over the 35 days: the renders series reads them).
  const installTpl = await bulk.template('installs', 'id = ?', [inst.id]);
  const renderTpl = await bulk.template('renders', 'install_id = ?', [inst.id]);
  const installIds: string[] = [];
  const installMs: number[] = [];
  for (const ms of spread(N_INSTALLS, nowMs, rnd)) {
    installIds.push(idAt('inst', ms));
    installMs.push(ms);
  }
  await timed('installs', async () => {
    await bulk.insert(
      'installs',
      installIds.map((id, i) => ({
        ...installTpl,
        id,
        name: `growth-install-${pad(i, 5)}`,
        render_seq: 2,
        current_render_seq: 2,
        cluster_id: cluster && i % 2 === 0 ? cluster : null,
        created_at: sec(installMs[i]!),
        updated_at: sec(installMs[i]!),
      })),
    );
    const renders: Rec[] = [];
    installIds.forEach((id, i) => {
      for (const seq of [1, 2]) {
        const ms = Math.min(nowMs - 60_000, installMs[i]! + (seq - 1) * rnd() * 5 * DAY * 1000);
        renders.push({ ...renderTpl, id: idAt('rnd', ms), install_id: id, seq, state: 'succeeded', created_at: sec(ms), updated_at: sec(ms) });
      }
    });
    // Ids in time order, as the server writes them.
    renders.sort((a, b) => (a.id! < b.id! ? -1 : 1));
    const n = await bulk.insert('renders', renders);
    // The day sums the server keeps as it writes renders (migration 0034), made again for the rows written around it.
    await bulk.exec('delete from render_prefix');
    for (const s of RENDER_PREFIX_BACKFILL) await bulk.exec(s);
    return n;
  });

  // The workspace's log: 10^6 events over 35 days.
  const pick = typePicker(rnd);
  const actors = [creds.user_id!, ...members];
  const tokens = Array.from({ length: 5 }, () => idAt('tok', nowMs - SPAN_DAYS * DAY * 1000));
  const pools = new Map<string, string[]>();
  const other = (rt: string) => {
    let pool = pools.get(rt);
    if (!pool) pools.set(rt, (pool = Array.from({ length: 50 }, () => `${rt.slice(0, 4)}${idAt('evt', nowMs - SPAN_DAYS * DAY * 1000).slice(3)}`)));
    return pool[Math.floor(rnd() * pool.length)]!;
  };
  const resourceOf = (type: EventType): string => {
    const rt = resourceTypeOf(type);
    if (rt === 'secret' || rt === 'secret_version') return secretIds[skewed(rnd, secretIds.length)]!;
    if (rt === 'install') return installIds[skewed(rnd, installIds.length)]!;
    if (rt === 'member') return actors[Math.floor(rnd() * actors.length)]!;
    return other(rt);
  };
  function* workspaceEvents(): Generator<Rec> {
    for (const ms of spread(N_EVENTS, nowMs, rnd)) {
      const type = pick();
      const byToken = rnd() < 0.1;
      yield {
        id: idAt('evt', ms),
        workspace_id: big,
        type,
        actor_kind: byToken ? 'api_token' : 'user',
        actor_id: byToken ? tokens[Math.floor(rnd() * tokens.length)]! : actors[skewed(rnd, actors.length)]!,
        credential_id: null,
        resource_type: resourceTypeOf(type),
        resource_id: resourceOf(type),
        request_id: `req-${ms}`,
        ip: '127.0.0.1',
        user_agent: 'growth',
        created_at: sec(ms),
        data: '{}',
      };
    }
  }
  await timed('workspace events', async () => {
    const n = await bulk.insert('events', workspaceEvents());
    // The running sum of machines alive the server keeps as machines change (migration 0035), made again from the machines and their events written around it.
    await bulk.exec('delete from machine_life_prefix');
    await bulk.exec(machineLifeBackfill(engine === 'postgres' ? 'postgres' : 'sqlite'));
    return n;
  });

  // Sign-ins of no workspace: every member's, and the owner's own (the loner has none).
  function* accountEvents(): Generator<Rec> {
    const n = members.length * SIGN_INS_EACH + OWNER_SIGN_INS;
    for (const ms of spread(n, nowMs, rnd)) {
      const who = rnd() < OWNER_SIGN_INS / n ? creds.user_id! : members[Math.floor(rnd() * members.length)]!;
      const failed = rnd() < 0.05;
      yield {
        id: idAt('evt', ms),
        workspace_id: null,
        type: failed ? 'session.failed' : 'session.created',
        actor_kind: failed ? 'anonymous' : 'user',
        actor_id: failed ? null : who,
        credential_id: null,
        resource_type: failed ? 'user' : 'session',
        resource_id: failed ? who : idAt('ses', ms),
        request_id: null,
        ip: '127.0.0.1',
        user_agent: 'growth',
        created_at: sec(ms),
        data: '{}',
      };
    }
  }
  await timed('account events', () => bulk.insert('events', accountEvents()));

  return {
    big,
    empty,
    owner: { userId: creds.user_id!, session: creds.session_token! },
    loner: { userId: lonerId, session: lonerSession },
    ids: {
      popularSecret: secretIds[0]!,
      rareSecret: secretIds[secretIds.length - 1]!,
      rareMember: members[members.length - 1]!,
      install: installIds[installIds.length - 1]!,
      secret: secretIds[secretIds.length - 1]!,
      cluster,
      packageId: pkg.packageId,
    },
    seconds,
  };
}

/** One read, from both workspaces (or both callers): what the row compares. */
interface Probe {
  name: string;
  /** The path and query of the big side and of the empty side. */
  big: string;
  empty: string;
  bigAuth: Record<string, string>;
  emptyAuth: Record<string, string>;
}

/** Milliseconds of one GET, its status checked. */
async function timedGet(base: string, p: string, headers: Record<string, string>): Promise<number> {
  const t = performance.now();
  const res = await fetch(base + p, { headers });
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`growth: GET ${p} -> ${res.status}`);
  return ms;
}

/** The cursor `pages` pages in (or of the last page there is), for "a later page". */
async function laterPage(base: string, p: string, headers: Record<string, string>, pages: number): Promise<string | null> {
  let cursor: string | null = null;
  let last: string | null = null;
  for (let i = 0; i < pages; i++) {
    const url: string = cursor ? `${p}${p.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}` : p;
    const res = await fetch(base + url, { headers });
    const body = (await res.json()) as { next_cursor?: string | null };
    if (res.status !== 200) throw new Error(`growth: GET ${url} -> ${res.status} ${JSON.stringify(body)}`);
    if (!body.next_cursor) break;
    last = cursor = body.next_cursor;
  }
  return last;
}

function probesOf(s: Seeded, nowS: number): { lists: Probe[]; paged: Set<string> } {
  const ownerIn = (ws: string) => ({ ...bearer(s.owner.session), 'service-context': ws });
  const bigAuth = ownerIn(s.big);
  const emptyAuth = ownerIn(s.empty);
  const both = (name: string, p: string, emptyP = p): Probe => ({ name, big: p, empty: emptyP, bigAuth, emptyAuth });
  const paged = new Set<string>();
  const list = (name: string, p: string, emptyP = p) => {
    paged.add(name);
    return both(name, p, emptyP);
  };
  const lists: Probe[] = [
    list('/v1/workspaces/{id}/members', `/v1/workspaces/${s.big}/members`, `/v1/workspaces/${s.empty}/members`),
    list('/v1/secrets', '/v1/secrets'),
    both('/v1/secrets?name=', `/v1/secrets?name=growth-secret-${pad(Math.floor(N_SECRETS / 2), 6)}`),
    list('/v1/installs', '/v1/installs'),
    ...(s.ids.cluster ? [list('/v1/installs?cluster_id=', `/v1/installs?cluster_id=${s.ids.cluster}`)] : []),
    list('/v1/api_tokens', '/v1/api_tokens'),
    list('/v1/workspaces/{id}/invitations', `/v1/workspaces/${s.big}/invitations`, `/v1/workspaces/${s.empty}/invitations`),
    list('/v1/packages', '/v1/packages'),
    list('/v1/clusters', '/v1/clusters'),
    list('/v1/machines', '/v1/machines'),
    list('/v1/compute/configs', '/v1/compute/configs'),
    list('/v1/repository_change_requests', '/v1/repository_change_requests'),
    list('/v1/snippets', '/v1/snippets'),
    list('/v1/dashboards', '/v1/dashboards'),
    list('/v1/webhooks', '/v1/webhooks'),
    list('/v1/notifications', '/v1/notifications'),
    both('/v1/workspaces/{id}/quotas', `/v1/workspaces/${s.big}/quotas`, `/v1/workspaces/${s.empty}/quotas`),
    both('/v1/me', '/v1/me'),
    both('/v1/workspaces', '/v1/workspaces'),
  ];
  const audit = (label: string, q: string) => list(`/v1/audit_events${label}`, `/v1/audit_events${q}`);
  lists.push(
    audit('', ''),
    audit('?type= (40% of events)', '?type=secret_version.accessed'),
    audit('?type= (0.01%)', '?type=webhook_delivery.retried'),
    audit('?type=<resource>.* (40%)', '?type=secret_version.*'),
    audit('?type=<resource>.* (0.1%)', '?type=webhook.*'),
    audit('?type=<resource>.* (0.01%)', '?type=webhook_delivery.*'),
    audit('?actor_id= (the most active)', `?actor_id=${s.owner.userId}`),
    audit('?actor_id= (a rare one)', `?actor_id=${s.ids.rareMember}`),
    audit('?resource_id= (a popular secret)', `?resource_id=${s.ids.popularSecret}`),
    audit('?resource_id= (a rare secret)', `?resource_id=${s.ids.rareSecret}`),
    audit('?since= (the last day)', `?since=${nowS - DAY}`),
    audit('?until= (29 days ago)', `?until=${nowS - 29 * DAY}`),
    audit('?since=&until= (a day, 10 days ago)', `?since=${nowS - 11 * DAY}&until=${nowS - 10 * DAY}`),
    audit('?type=&since= (secret reads, the last day)', `?type=secret_version.accessed&since=${nowS - DAY}`),
  );
  // The caller's own log: the owner (2,000 sign-ins among 50,000 of others) against a person with none.
  const me = (label: string, q: string): Probe => {
    paged.add(`/v1/me/events${label}`);
    return { name: `/v1/me/events${label}`, big: `/v1/me/events${q}`, empty: `/v1/me/events${q}`, bigAuth: bearer(s.owner.session), emptyAuth: bearer(s.loner.session) };
  };
  lists.push(
    me('', ''),
    me('?type=', '?type=session.created'),
    me('?type=<resource>.*', '?type=device_authorization.*'),
    me('?since= (the last day)', `?since=${nowS - DAY}`),
    me('?until= (29 days ago)', `?until=${nowS - 29 * DAY}`),
  );
  const from = nowS - 30 * DAY;
  for (const [key, filters] of [
    ['writes', ['', '&type=install.updated', '&type=secret.*']],
    ['secret_accesses', ['']],
    ['renders', ['', `&install=${s.ids.install}`, '&status=succeeded']],
    ['machines_running', ['']],
    ['machines_suspended', ['']],
    ['monthly_cost_cents', ['']],
    ['notifications_unread', ['']],
  ] as const) {
    for (const f of filters) {
      const label = f.startsWith('&install=') ? ', install=' : f ? `, ${f.slice(1)}` : '';
      lists.push(both(`/v1/platform_metrics/${key}/series (30 days${label})`, `/v1/platform_metrics/${key}/series?from=${from}&to=${nowS}${f}`));
    }
  }
  return { lists, paged };
}

/** The series and the time filters ask relative to now: their statements are the same each time. */
export async function growth(o: { root: string; engine: 'sqlite' | 'postgres'; dbEnv: Record<string, string>; repeat: number }): Promise<Row[]> {
  const { root, engine } = o;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-growth-'));
  let env: Record<string, string> = { ...o.dbEnv, WSP_DATA_DIR: dataDir, WSP_LOG_LEVEL: 'warn' };
  let dropDb: (() => Promise<void>) | null = null;
  if (engine === 'postgres') {
    const admin = new pg.Client({ connectionString: o.dbEnv.DATABASE_URL });
    await admin.connect();
    const name = `wsp_growth_${process.pid}`;
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(o.dbEnv.DATABASE_URL!);
    url.pathname = `/${name}`;
    env = { ...env, DATABASE_URL: url.toString() };
    dropDb = async () => {
      const c = new pg.Client({ connectionString: o.dbEnv.DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  const rows: Row[] = [];
  try {
    // Migrated by the first start, which makes the API's templates; seed() stops it before the bulk rows go in.
    let server = await startServer([...wspCommand(root), 'serve'], env, await freePort());
    const bulk = engine === 'sqlite' ? sqliteBulk(path.join(dataDir, 'wsp.sqlite')) : postgresBulk(env.DATABASE_URL!);
    let s: Seeded;
    const t0 = performance.now();
    try {
      s = await seed(root, engine, env, bulk, server);
    } finally {
      await bulk.close();
    }
    const seedSeconds = (performance.now() - t0) / 1000;
    if (engine === 'postgres' && process.env.WSP_BENCH_GROWTH_ANALYZE !== '0') {
      // What autovacuum does within a minute of a table growing by a tenth (the server runs no
      // ANALYZE itself): statistics, so the planner knows events is not the 1,000-row table of its defaults.
      const c = new pg.Client({ connectionString: env.DATABASE_URL });
      await c.connect();
      await c.query('analyze');
      await c.end();
    }
    server = await startServer([...wspCommand(root), 'serve'], env, await freePort());
    try {
      rows.push(...(await measure(server, s, engine, o.repeat, seedSeconds)));
    } finally {
      await server.stop();
    }
  } finally {
    // WSP_BENCH_GROWTH_KEEP=1: the grown database stays, for EXPLAIN on its real data.
    if (process.env.WSP_BENCH_GROWTH_KEEP === '1') console.error(`growth ${engine}: kept ${env.DATABASE_URL ?? path.join(dataDir, 'wsp.sqlite')}`);
    else {
      await dropDb?.();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}

async function measure(server: Server, s: Seeded, engine: string, repeat: number, seedSeconds: number): Promise<Row[]> {
  const nowS = Math.floor(Date.now() / 1000);
  const all = probesOf(s, nowS);
  // WSP_BENCH_GROWTH_ONLY: only the probes whose name holds it (e.g. `platform_metrics`), for a run of one area.
  const only = process.env.WSP_BENCH_GROWTH_ONLY;
  const { lists, paged } = { ...all, lists: only ? all.lists.filter((p) => p.name.includes(only)) : all.lists };
  // The event series count closed minutes a few days per request (src/events/minute-counts.ts):
  // reads until every minute of the 30 days is counted, as a dashboard left open would have.
  for (const p of lists.filter((x) => x.name.includes('platform_metrics'))) for (let i = 0; i < 8; i++) await timedGet(server.url, p.big, p.bigAuth);
  const probes: Probe[] = [];
  for (const p of lists) {
    if (!paged.has(p.name)) {
      probes.push(p);
      continue;
    }
    probes.push({ ...p, name: `${p.name} (first page)` });
    // Twenty pages in: the empty side has no later page, so it reads its first.
    const sep = p.big.includes('?') ? '&' : '?';
    const cursor = await laterPage(server.url, p.big, p.bigAuth, 20);
    if (cursor) probes.push({ ...p, name: `${p.name} (a later page)`, big: `${p.big}${sep}cursor=${encodeURIComponent(cursor)}` });
  }
  const samples = 20 * repeat;
  const rows: Row[] = [];
  const table: string[] = [];
  for (const p of probes) {
    const big: number[] = [];
    const empty: number[] = [];
    for (let i = 0; i < 3; i++) {
      await timedGet(server.url, p.big, p.bigAuth);
      await timedGet(server.url, p.empty, p.emptyAuth);
    }
    for (let i = 0; i < samples; i++) {
      // Alternated one request at a time, the order switched each round: the machine's noise falls on both.
      if (i % 2) {
        big.push(await timedGet(server.url, p.big, p.bigAuth));
        empty.push(await timedGet(server.url, p.empty, p.emptyAuth));
      } else {
        empty.push(await timedGet(server.url, p.empty, p.emptyAuth));
        big.push(await timedGet(server.url, p.big, p.bigAuth));
      }
    }
    const q99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;
    const ratio = median(big) / median(empty);
    rows.push({
      scenario: `growth: GET ${p.name}`,
      engine,
      variant: 'project',
      rps: NaN,
      p50: median(big),
      p99: q99(big),
      rssMb: server.peakRssMb(),
      errors: 0,
      note: `empty p50 ${median(empty).toFixed(2)} ms, p99 ${q99(empty).toFixed(2)}; big/empty p50 ${ratio.toFixed(2)} (target ≤ 2)${ratio > 2 ? ' OVER' : ''}`,
    });
    table.push(`| ${p.name} | ${engine} | ${median(empty).toFixed(2)} | ${median(big).toFixed(2)} | ${ratio.toFixed(2)} |`);
  }
  const seeded = Object.entries(s.seconds)
    .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
    .join(', ');
  console.error(
    `growth ${engine}: seeded in ${seedSeconds.toFixed(1)} s (${seeded}); ${samples} requests a side, alternated\n| route | engine | empty p50 ms | big p50 ms | ratio |\n|---|---|---:|---:|---:|\n${table.join('\n')}`,
  );
  return rows;
}
