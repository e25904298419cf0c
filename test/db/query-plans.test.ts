import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, DefaultQueryExecutor, sql } from 'kysely';
import { useTestApp } from '../helpers/test-app.js';
import { as } from '../helpers/harness.js';
import { PLATFORM_METRICS } from '../../src/platform-metrics/catalog.js';
import { FIXED_PATHS, buildTenant, documentRoutes, noStream, type DocRoute, type TenantFixture } from '../security/tenant-fixture.js';
import { ACCOUNT_EVENT_TYPES, resourceTypeOf } from '../../src/events/event-type-schemas.js';
import { idAt } from '../../src/shared/ids.js';

/**
 * Issue 54.4: every read answers through an index on both engines, so that a list page or a filter
 * of a workspace with 10^6 events costs what it costs on an empty one. Every GET route of the
 * OpenAPI document is called, each of its query filters in turn (every enum value, both booleans)
 * and its second page, in a workspace holding one resource of every kind; every statement those
 * requests run is explained by its engine and judged:
 * - SQLite (`EXPLAIN QUERY PLAN`): no `SCAN` of a table or of a whole index, no temporary B-tree
 *   for an ORDER BY (a sort of every matching row before the page's first);
 * - PostgreSQL (`EXPLAIN`, with sequential scans and sorts priced out, so that either appears only
 *   where no index can answer): no `Seq Scan`, no sort under a LIMIT. Which index it picks is left
 *   to SQLite's judgment above: PostgreSQL's planner prices the fixture's tiny tables by their
 *   real size, where reading a whole primary key backwards costs as little as a search.
 * The few statements that sort a set bounded by design (the caller's own workspaces, the pages of
 * a merged search) are named in ALLOWED with the bound that makes them cheap. A route the
 * suite cannot call (a query parameter it cannot fill) fails the test, so no new list escapes it.
 */
const h = useTestApp({ seed: false });

/**
 * Statements whose scan or sort is bounded by something other than the workspace's size: the
 * route (a URL pattern), the table and the rule, with the reason.
 */
const ALLOWED: { url: RegExp; target: string; rule: RegExp; why: string }[] = [
  {
    url: /^\/v1\/(workspaces|me)\?/,
    target: 'workspaces',
    rule: /^sort/,
    why: "the caller's own workspaces, sorted by id after the search of the caller's memberships: as many as one person belongs to",
  },
  {
    url: /^\/v1\/me\/events\?/,
    target: 's',
    rule: /^sort/,
    why: "src/audit/store.ts merges two searches' pages: SQLite orders each page's rows again (at most `limit` of them, each page read in its index's order)",
  },
];

/** The fixture kind a query filter's id names, by the parameter's name. */
const KIND_OF_FILTER: Record<string, string> = {
  install_id: 'install',
  install: 'install',
  package_id: 'package',
  machine_id: 'machine',
  cluster_id: 'cluster',
  cluster: 'cluster',
  compute_config_id: 'computeConfig',
  dashboard_id: 'dashboard',
  secret_id: 'secret',
  webhook_id: 'webhook',
  render_id: 'render',
  operation_id: 'operation',
  workspace_id: 'workspace',
  resource_id: 'secret',
};

type Param = NonNullable<DocRoute['op']['parameters']>[number];

/** The values a query parameter is tried with (one request each); [] for the paging ones every request sets. */
function valuesOf(p: Param, f: TenantFixture, owner: string, nowSeconds: number): string[] | undefined {
  const schema = (p.schema ?? {}) as { type?: string | string[]; enum?: unknown[]; anyOf?: { enum?: unknown[]; const?: unknown }[] };
  if (p.name === 'limit' || p.name === 'cursor') return [];
  const consts = schema.anyOf?.flatMap((s) => s.enum ?? (s.const === undefined ? [] : [s.const]));
  if (schema.enum ?? consts?.length) return (schema.enum ?? consts!).map(String);
  if (schema.type === 'boolean') return ['true', 'false'];
  if (p.name in KIND_OF_FILTER) return [f.ids[KIND_OF_FILTER[p.name]!]!];
  switch (p.name) {
    case 'actor_id':
    case 'user_id':
      return [owner];
    case 'since':
    case 'from':
      return [String(nowSeconds - 86_400)];
    case 'until':
    case 'to':
      return [String(nowSeconds + 60)];
    case 'step':
      return ['3600'];
    case 'version':
      // The metric's version leaves its statements as they are; a wrong one is a 404.
      return [];
    case 'type':
      return ['secret.created', 'secret.*'];
    case 'status':
      return ['succeeded'];
    case 'region':
      // The fixture's compute config and machine are in fsn1.
      return ['fsn1'];
    case 'name':
      return [`${f.marker}-secret`];
    default:
      return undefined;
  }
}

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** Every statement run while `fn` runs, inside transactions too (their executors share this prototype). */
async function statementsWhile(fn: () => Promise<void>): Promise<Statement[]> {
  const base = Object.getPrototypeOf(DefaultQueryExecutor.prototype) as { executeQuery: (q: CompiledQuery, ...rest: unknown[]) => Promise<unknown> };
  const original = base.executeQuery;
  const seen: Statement[] = [];
  base.executeQuery = function (q, ...rest) {
    seen.push({ sql: q.sql, parameters: q.parameters });
    return original.call(this, q, ...rest);
  };
  try {
    await fn();
  } finally {
    base.executeQuery = original;
  }
  return seen;
}

/** The plan's offending lines: each `[table or index, rule]`. */
async function offences(s: Statement): Promise<{ target: string; rule: string; plan: string }[]> {
  const db = h.database.db;
  if (h.database.engine === 'sqlite') {
    const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]));
    const lines = plan.rows.map((r) => r.detail);
    const text = lines.join(' | ');
    const out: { target: string; rule: string; plan: string }[] = [];
    // A subquery's or a CTE's rows (each named by a CO-ROUTINE or MATERIALIZE line): its own lines judge how they were found.
    const derived = new Set(lines.flatMap((d) => /^(?:CO-ROUTINE|MATERIALIZE) (\S+)/.exec(d)?.[1] ?? []));
    let last = '';
    for (const d of lines) {
      // Not a table's rows: constant rows (a VALUES list: the event series' points, src/events/minute-counts.ts), a subquery's, a table-valued function's.
      const scan = /^SCAN (?!CONSTANT ROW|\d+ CONSTANT ROWS|\(|\S+ VIRTUAL TABLE)(\S+)(?: USING (?:COVERING )?INDEX (\S+))?/.exec(d);
      if (scan && !derived.has(scan[1]!)) out.push({ target: scan[1]!, rule: scan[2] ? `scan of a whole index (${scan[2]})` : 'scan of a whole table', plan: text });
      // The rows sorted are those of the search or scan just before.
      if (/USE TEMP B-TREE FOR (ORDER BY|RIGHT PART OF ORDER BY|LAST TERM OF ORDER BY)/.test(d)) out.push({ target: last.split(' ')[1] ?? '?', rule: 'sort of every matching row', plan: text });
      if (/^(SEARCH|SCAN) /.test(d)) last = d;
    }
    return out;
  }
  return db.transaction().execute(async (trx) => {
    // What the planner does for a table of millions of rows (the fixture's are tiny, where a scan
    // or a sort costs nothing): a sequential scan and a sort are the last resorts, chosen only
    // where no index can answer.
    await sql`set local enable_seqscan = off`.execute(trx);
    await sql`set local enable_sort = off`.execute(trx);
    const plan = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${s.sql}`, [...s.parameters]));
    const root = (plan.rows[0]!['QUERY PLAN'] as { Plan: PgNode }[])[0]!.Plan;
    const out: { target: string; rule: string; plan: string }[] = [];
    const text = JSON.stringify(root);
    const walk = (n: PgNode, limited = false) => {
      if (n['Node Type'] === 'Seq Scan') out.push({ target: n['Relation Name'] ?? '?', rule: 'scan of a whole table', plan: text });
      // A sort under a LIMIT orders every matching row to answer a page; one for a GROUP BY
      // orders the rows the range's indexed search found, which the answer reads anyway.
      if (n['Node Type'] === 'Sort' && limited) {
        const below = n.Plans?.[0];
        out.push({ target: below?.['Relation Name'] ?? '?', rule: 'sort of every matching row', plan: text });
      }
      for (const c of n.Plans ?? []) walk(c, limited || n['Node Type'] === 'Limit');
    };
    walk(root);
    return out;
  });
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PgNode[];
}

test('every read of the API answers through an index: no scan of a whole table or index, no sort of every row', { timeout: 300_000 }, async () => {
  const f = await buildTenant(h, 'Plans');
  const owner = f.seed.owner;
  const nowSeconds = Math.floor(h.clock.nowMs() / 1000);
  const routes = documentRoutes(h).filter((r) => r.method === 'GET' && !r.public && !r.path.includes('repository.git') && !Object.keys(noStream(r)).length);
  const unfillable: string[] = [];
  const failed: string[] = [];
  const found = new Map<string, string>();
  let requests = 0;
  let explained = 0;
  for (const route of routes) {
    let path = route.path;
    let fillable = true;
    for (const p of route.params) {
      const id = p.kind ? f.ids[p.kind] : undefined;
      if (!id) {
        fillable = false;
        break;
      }
      path = path.replace(`{${p.name}}`, id);
    }
    if (!fillable) {
      unfillable.push(`${route.key}: a path id`);
      continue;
    }
    const queries: Record<string, string>[] = [{}];
    for (const p of (route.op.parameters ?? []).filter((x) => x.in === 'query')) {
      const values = valuesOf(p, f, owner.userId, nowSeconds);
      if (values === undefined) {
        unfillable.push(`${route.key}: ?${p.name}`);
        continue;
      }
      for (const v of values) {
        if (p.required) for (const q of queries) q[p.name] ??= v;
        else queries.push({ [p.name]: v });
      }
    }
    // The series route is documented once and reads a different table for each metric.
    const metrics = Object.values(FIXED_PATHS).includes(path) ? PLATFORM_METRICS : undefined;
    const paths = metrics ? metrics.map((m) => path.replace('/writes/', `/${m.key}/`)) : [path];
    // A metric takes only its own filters (others are a 422).
    const takes = (q: Record<string, string>, p: string) => !metrics || Object.keys(q).every((k) => (metrics.find((m) => p.includes(`/${m.key}/`))!.filter_keys as readonly string[]).includes(k));
    const paged = (route.op.parameters ?? []).some((p) => p.in === 'query' && p.name === 'limit');
    for (const [q, path] of queries.flatMap((q) => paths.filter((p) => takes(q, p)).map((p) => [q, p] as const))) {
      const get = async (query: Record<string, string>) => {
        const url = `${path}?${new URLSearchParams(query).toString()}`;
        let res: Awaited<ReturnType<typeof h.app.inject>> | undefined;
        const statements = await statementsWhile(async () => {
          res = await h.app.inject({ method: 'GET', url, headers: as(owner.session, f.seed.workspaceId) });
        });
        requests++;
        if (res!.statusCode !== 200) failed.push(`${url} -> ${res!.statusCode} ${res!.body.slice(0, 200)}`);
        for (const s of statements) {
          if (!/^\s*(select|with)\b/i.test(s.sql)) continue;
          explained++;
          for (const o of await offences(s)) {
            if (ALLOWED.some((a) => a.url.test(url) && a.target === o.target && a.rule.test(o.rule))) continue;
            found.set(`${o.target}: ${o.rule}: ${s.sql}`, `${url}\n    ${s.sql}\n    ${o.plan.slice(0, 2000)}`);
          }
        }
        return res!;
      };
      const first = await get(paged ? { ...q, limit: '1' } : q);
      const token = paged && first.statusCode === 200 ? first.json<{ next_cursor?: string | null }>().next_cursor : null;
      if (token) await get({ ...q, limit: '1', cursor: token });
    }
  }
  assert.deepEqual(unfillable, [], 'routes the suite cannot call: teach it their path ids or filters');
  assert.deepEqual(failed, [], 'reads that did not answer 200');
  assert.ok(requests > routes.length, `${requests} requests for ${routes.length} routes`);
  // Each request reads at least its caller's credential: fewer statements means the capture missed some.
  assert.ok(explained >= requests, `${explained} statements explained for ${requests} requests`);
  assert.deepEqual(
    [...found.entries()].map(([k, v]) => `${k}\n  ${v}`),
    [],
    'statements that read more than their answer needs',
  );
});

/**
 * The rule above reads every plan, but a search of an index that serves the workspace and not the
 * filter passes it: `SEARCH events USING INDEX events_workspace (workspace_id=?)` for `type=webhook.*`
 * read every event of the workspace until a page of webhook events was found (0.75 s at 10^6
 * events, bench/growth.ts), and for `until` every event newer than it. So each filter of the two
 * event logs is held to a search whose index takes it: its column among the index's constraints
 * (SQLite's `(workspace_id=? AND resource_type=?)`; a time filter as a range of ids). PostgreSQL's
 * choice among indexes follows its statistics of the real tables (above); its plans here are
 * judged by the rule above only.
 */
test('every filter of the audit log and of a person log is a constraint of the index searched', { timeout: 120_000 }, async () => {
  const f = await buildTenant(h, 'Filters');
  const owner = f.seed.owner;
  const now = Math.floor(h.clock.nowMs() / 1000);
  const cases: { url: string; headers: Record<string, string>; constraint: RegExp }[] = [
    ...(
      [
        ['type=secret.created', /\btype=\?/],
        ['type=secret.*', /\bresource_type=\?/],
        [`actor_id=${owner.userId}`, /\bactor_id=\?/],
        [`resource_id=${f.ids.secret}`, /\bresource_id=\?/],
        [`since=${now - 3600}`, /\bid>\?/],
        [`until=${now + 60}`, /\bid<\?/],
      ] as const
    ).map(([q, constraint]) => ({ url: `/v1/audit_events?${q}`, headers: as(owner.session, f.seed.workspaceId), constraint })),
    { url: `/v1/me/events?since=${now - 3600}`, headers: as(owner.session), constraint: /\bid>\?/ },
    { url: `/v1/me/events?until=${now + 60}`, headers: as(owner.session), constraint: /\bid<\?/ },
  ];
  const wrong: string[] = [];
  let searches = 0;
  for (const c of cases) {
    let status = 0;
    const statements = await statementsWhile(async () => {
      status = (await h.app.inject({ method: 'GET', url: c.url, headers: c.headers })).statusCode;
    });
    assert.equal(status, 200, c.url);
    if (h.database.engine !== 'sqlite') continue;
    for (const s of statements.filter((x) => /\bfrom "events"/.test(x.sql))) {
      const plan = await h.database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]));
      for (const d of plan.rows.map((r) => r.detail).filter((x) => /^SEARCH events\b/.test(x))) {
        searches++;
        if (!c.constraint.test(d)) wrong.push(`${c.url}: ${d}\n    ${s.sql}`);
      }
    }
  }
  if (h.database.engine === 'sqlite') assert.ok(searches >= cases.length, `${searches} searches of events for ${cases.length} reads`);
  assert.deepEqual(wrong, [], 'filters read through an index that does not take them');
});

/**
 * A person's own log (GET /v1/me/events), every filter it takes and a later page, on both engines:
 * each search of events is one of an index that takes the person (`actor_id` or `resource_id`)
 * and the kind of event (one `type` or one `resource_type`, an equality: PostgreSQL gives an
 * index's order under equalities only) and, for a time filter, the range of ids. With the account
 * types as a list beside the person (`type in (...)`), PostgreSQL's planner, trusting its
 * statistics of the whole table, read a person's 2,000 sign-ins and sorted them for a page
 * (bench/growth.ts, docs/benchmarks.md): no other plan was wrong by the rule of the first test.
 */
test('every filter of a person log is a search of an index on the person and the kind of event, on both engines', { timeout: 120_000 }, async () => {
  const f = await buildTenant(h, 'Mine');
  const owner = f.seed.owner;
  const now = Math.floor(h.clock.nowMs() / 1000);
  // Three events of the owner's own, so that a page of one has a later one.
  for (const [i, type, actor, resource] of [
    [3, 'session.created', owner.userId, 'ses_planA'],
    [2, 'session.failed', null, owner.userId],
    [1, 'user.email_verified', owner.userId, owner.userId],
  ] as const) {
    const ms = h.clock.nowMs() - i * 1000;
    await h.database.db
      .insertInto('events')
      .values({
        id: idAt('evt', ms),
        workspace_id: null,
        type,
        actor_kind: actor ? 'user' : 'anonymous',
        actor_id: actor,
        credential_id: null,
        resource_type: resourceTypeOf(type),
        resource_id: resource,
        request_id: null,
        ip: null,
        user_agent: null,
        created_at: Math.floor(ms / 1000),
        data: '{}',
      })
      .execute();
  }
  const resources = [...new Set(ACCOUNT_EVENT_TYPES.map(resourceTypeOf))];
  const filters: { q: Record<string, string>; kind: RegExp; range?: RegExp }[] = [
    { q: {}, kind: /(resource_)?type/ },
    ...ACCOUNT_EVENT_TYPES.map((t) => ({ q: { type: t }, kind: /(?<!resource_)type/ })),
    ...resources.map((r) => ({ q: { type: `${r}.*` }, kind: /(resource_)?type/ })),
    { q: { since: String(now - 3600) }, kind: /(resource_)?type/, range: /\bid ?>=? ?/ },
    { q: { until: String(now + 60) }, kind: /(resource_)?type/, range: /\bid ?< ?/ },
  ];
  const wrong: string[] = [];
  let searches = 0;
  let pages = 0;
  for (const filter of filters) {
    for (let cursor: string | null | undefined = null, page = 0; page < 2 && cursor !== undefined; page++) {
      const url: string = `/v1/me/events?${new URLSearchParams({ ...filter.q, limit: '1', ...(cursor ? { cursor } : {}) }).toString()}`;
      let res: Awaited<ReturnType<typeof h.app.inject>> | undefined;
      const statements = await statementsWhile(async () => {
        res = await h.app.inject({ method: 'GET', url, headers: as(owner.session) });
      });
      assert.equal(res!.statusCode, 200, `${url}: ${res!.body.slice(0, 200)}`);
      pages++;
      cursor = res!.json<{ next_cursor?: string | null }>().next_cursor ?? undefined;
      for (const s of statements.filter((x) => /\bfrom "events"/.test(x.sql))) {
        for (const { index, cond } of await eventSearches(s)) {
          searches++;
          const kind = new RegExp(`(?:^|[^a-z_])${filter.kind.source} ?= ?`);
          const ok = /(?:^|[^a-z_])(actor_id|resource_id) ?= ?/.test(cond) && kind.test(cond) && (!filter.range || filter.range.test(cond));
          if (!ok) wrong.push(`${url}: ${index} (${cond})\n    ${s.sql}`);
        }
      }
    }
  }
  // Each page at least the actor's search and the resource's, of each kind it reads.
  assert.ok(searches >= 2 * pages, `${searches} searches of events for ${pages} pages`);
  assert.deepEqual(wrong, [], "a person log's search whose index does not take the person, the kind of event and the time");
});

/** Each search of the events table in a statement's plan: the index and its constraints (SQLite's `(a=? AND b=?)`, PostgreSQL's Index Cond). */
async function eventSearches(s: Statement): Promise<{ index: string; cond: string }[]> {
  const db = h.database.db;
  if (h.database.engine === 'sqlite') {
    const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]));
    return plan.rows
      .map((r) => r.detail)
      .filter((d) => /^(SEARCH|SCAN) events\b/.test(d))
      .map((d) => {
        const m = /USING (?:COVERING )?INDEX (\S+)(?: \((.*)\))?/.exec(d);
        return { index: m?.[1] ?? d, cond: m?.[2] ?? '' };
      });
  }
  return db.transaction().execute(async (trx) => {
    // As in the first test: the fixture's tables are tiny, where a scan or a sort costs nothing.
    await sql`set local enable_seqscan = off`.execute(trx);
    await sql`set local enable_sort = off`.execute(trx);
    const plan = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${s.sql}`, [...s.parameters]));
    const out: { index: string; cond: string }[] = [];
    const walk = (n: PgNode) => {
      if (n['Relation Name'] === 'events' || (n['Node Type'] === 'Bitmap Index Scan' && n['Index Name']?.startsWith('events'))) {
        out.push({ index: n['Index Name'] ?? n['Node Type'], cond: (n['Index Cond'] ?? '').replace(/"/g, '') });
      }
      for (const c of n.Plans ?? []) walk(c);
    };
    walk((plan.rows[0]!['QUERY PLAN'] as { Plan: PgNode }[])[0]!.Plan);
    return out;
  });
}

/**
 * The renders series and the renders' writes (render_prefix, migration 0034) search the day sums
 * by their primary key, the workspace, the key and a range of seconds (the series: the day up to
 * each point; the writes: the rest of the render's day, and the row before its second): none of
 * them reads a workspace's day sums beyond the day asked.
 */
test('the renders series and the writes that keep its day sums search render_prefix by workspace, key and a range of seconds, on both engines', { timeout: 120_000 }, async () => {
  const { renderStore } = await import('../../src/installs/renders/store.js');
  const f = await buildTenant(h, 'RenderPrefix');
  const db = h.database.db;
  const template = await db.selectFrom('renders').selectAll().where('id', '=', f.ids.render!).executeTakeFirstOrThrow();
  const at = template.created_at;
  const id = `rnd_plans${Date.now()}`;
  const statements = await statementsWhile(async () => {
    await db.transaction().execute((trx) => renderStore.insert(trx, { ...template, id, seq: 9_999, state: 'queued', created_at: at + 1, updated_at: at + 1 }));
    assert.ok(await renderStore.transition(db, id, 'queued', { state: 'running', updated_at: at + 2 }));
    for (const filter of [{}, { install: template.install_id }, { status: 'succeeded' }, { install: template.install_id, status: 'running' }]) {
      await renderStore.countsByBucket(db, template.workspace_id, { from: at - 30 * 86_400, step: 27_000, count: 96 }, filter);
    }
  });
  // A busy workspace's day sums (PostgreSQL plans by the table's statistics: on a few rows, filtering them is as cheap as a search).
  const busy = Array.from({ length: 20_000 }, (_, i) => ({ workspace_id: template.workspace_id, key: `i:inst_busy${i % 400}`, created_at: at - (at % 86_400) + (i % 86_000), p: i }));
  for (let i = 0; i < busy.length; i += 500)
    await db
      .insertInto('render_prefix')
      .values(busy.slice(i, i + 500))
      .execute();
  // Four series; the writes two statements each on SQLite, one on PostgreSQL.
  await assertPrefixSearches(statements, { table: 'render_prefix', at: 'created_at', bounded: true }, h.database.engine === 'sqlite' ? 8 : 6);
});

/**
 * Searches of a table of running sums (src/db/prefix-sums.ts): every read of `table` goes by its
 * primary key, the workspace, the key and the seconds (from below as well when `bounded`: a day's
 * sums), whatever else the workspace holds.
 */
async function assertPrefixSearches(statements: { sql: string; parameters: readonly unknown[] }[], t: { table: string; at: string; bounded: boolean }, atLeast: number) {
  const db = h.database.db;
  const judged = statements.filter((s) => new RegExp(`\\b${t.table}\\b`).test(s.sql));
  await sql`analyze ${sql.table(t.table)}`.execute(db);
  assert.ok(judged.length >= atLeast, `${judged.length} statements of ${t.table}`);
  const range = t.bounded ? `${t.at}>\\? AND ${t.at}<\\?` : `${t.at}[<>]\\?`;
  const sqliteSearch = new RegExp(`^SEARCH \\S+ USING (?:(?:COVERING )?INDEX sqlite_autoindex_${t.table}_1|PRIMARY KEY) \\(workspace_id=\\? AND key=\\? AND ${range}\\)$`);
  const wrong: string[] = [];
  for (const s of judged) {
    if (h.database.engine === 'sqlite') {
      const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]));
      const lines = plan.rows.map((r) => r.detail).filter((d) => new RegExp(`^(SEARCH|SCAN) (${t.table}|r)\\b`).test(d));
      if (!lines.length) wrong.push(`no search of ${t.table}: ${s.sql}`);
      for (const d of lines) if (!sqliteSearch.test(d)) wrong.push(`${d}\n    ${s.sql}`);
      continue;
    }
    const plan = await db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      return trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${s.sql}`, [...s.parameters]));
    });
    const scans: PgNode[] = [];
    const walk = (n: PgNode) => {
      if (n['Relation Name'] === t.table) scans.push(n);
      for (const c of n.Plans ?? []) walk(c);
    };
    walk((plan.rows[0]!['QUERY PLAN'] as { Plan: PgNode }[])[0]!.Plan);
    const reads = scans.filter((n) => n['Node Type'] !== 'ModifyTable');
    if (!reads.length) wrong.push(`no search of ${t.table}: ${s.sql}`);
    for (const n of reads) {
      const cond = (n['Index Cond'] ?? '').replace(/"/g, '');
      const seconds = t.bounded ? new RegExp(`${t.at} >=?`).test(cond) && new RegExp(`${t.at} <=?`).test(cond) : new RegExp(`${t.at} [<>]=?`).test(cond);
      if (n['Index Name'] !== `${t.table}_pk` || !/workspace_id =/.test(cond) || !/key =|key = ANY/.test(cond) || !seconds)
        wrong.push(`${n['Node Type']} ${n['Index Name'] ?? ''} (${cond})\n    ${s.sql}`);
    }
  }
  assert.deepEqual(wrong, [], `a statement of ${t.table} that does not search its primary key by workspace, key and seconds`);
}

/**
 * The machines_running series and the machines' status changes that keep its running sum
 * (machine_life_prefix, migration 0035) search it by its primary key, the workspace, the key and
 * the seconds up to a point (the series) or from a write's second on (the writes).
 */
test('the machines_running series and the status changes that keep its running sum search machine_life_prefix by workspace, key and seconds, on both engines', { timeout: 120_000 }, async () => {
  const { machineStore } = await import('../../src/compute/machines/store.js');
  const f = await buildTenant(h, 'MachineLives');
  const db = h.database.db;
  const template = await db.selectFrom('machines').selectAll().where('id', '=', f.ids.machine!).executeTakeFirstOrThrow();
  const at = template.created_at;
  const id = `mch_plans${Date.now()}`;
  const statements = await statementsWhile(async () => {
    await machineStore.insert(db, { ...template, id, hostname: id, status: 'creating', created_at: at + 1, updated_at: at + 1 });
    assert.ok(await machineStore.transition(db, id, 'creating', { status: 'failed', updated_at: at + 2 }));
    for (const scope of [{}, { cluster: template.cluster_id }, { region: template.location }, { cluster: template.cluster_id, region: template.location }]) {
      await machineStore.aliveAt(
        db,
        template.workspace_id,
        Array.from({ length: 96 }, (_, i) => at - 30 * 86_400 + i * 27_000),
        scope,
      );
    }
  });
  const busy = Array.from({ length: 20_000 }, (_, i) => ({ workspace_id: template.workspace_id, key: `c:cl_busy${i % 400}`, at: at - 40 * 86_400 + i, p: i }));
  for (let i = 0; i < busy.length; i += 500)
    await db
      .insertInto('machine_life_prefix')
      .values(busy.slice(i, i + 500))
      .execute();
  // Four series; the writes two statements each on SQLite, one on PostgreSQL.
  await assertPrefixSearches(statements, { table: 'machine_life_prefix', at: 'at', bounded: false }, h.database.engine === 'sqlite' ? 8 : 6);
});
