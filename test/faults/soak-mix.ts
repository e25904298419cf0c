import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { api } from '../helpers/processes.js';
import { LoadTally } from './report.js';

const execFileP = promisify(execFile);

/** What the mix runs as: one workspace, its owner (session, email and password) and the owner's user id. */
export interface SoakWorkspace {
  workspaceId: string;
  session: string;
  apiToken: string;
  email: string;
  password: string;
  memberUserId: string;
  /** A session of that member: the reviewer who approves the owner's change requests. */
  memberSession: string;
  computeConfigId: string;
}

/**
 * The answers of a mix: every request counted by `METHOD /route/{template}` and status, the ones
 * no rule of the mix expects kept apart (they fail the soak: any 5xx, or a 4xx the mix did not ask for).
 */
export class MixTally {
  readonly all = new LoadTally();
  readonly byRoute = new Map<string, Map<number | string, number>>();
  readonly unexpected: string[] = [];
  /** Documented 4xx the mix provokes on purpose (a machine not running yet, the device-login limit). */
  expected4xx = 0;

  record(route: string, status: number | string, ms: number, ok: boolean, detail: string): void {
    this.all.record(status, ms);
    const per = this.byRoute.get(route) ?? new Map<number | string, number>();
    per.set(status, (per.get(status) ?? 0) + 1);
    this.byRoute.set(route, per);
    if (!ok) this.unexpected.push(`${route} -> ${status} ${detail}`.slice(0, 400));
    else if (typeof status === 'number' && status >= 400) this.expected4xx++;
  }

  get fivexx(): number {
    let n = 0;
    for (const per of this.byRoute.values()) for (const [s, c] of per) if (typeof s === 'number' && s >= 500) n += c;
    return n;
  }
}

type Call = (route: string, url: string, opts?: { body?: unknown; headers?: Record<string, string>; credential?: string | null; allow?: number[]; form?: Record<string, string> }) => Promise<any>;

/** The caller of one lane: labels each request with its route template, times and judges it. */
function caller(base: string, ws: SoakWorkspace, tally: MixTally): Call {
  return async (route, url, opts = {}) => {
    const method = route.slice(0, route.indexOf(' '));
    const t0 = performance.now();
    let res: { status: number; body: any; text: string };
    try {
      if (opts.form) {
        const r = await fetch(base + url, { method, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(opts.form).toString() });
        const text = await r.text();
        res = { status: r.status, text, body: text.startsWith('{') ? JSON.parse(text) : text };
      } else {
        const credential = opts.credential === null ? undefined : (opts.credential ?? ws.session);
        res = await api(base, method, url, {
          ...(credential ? { credential } : {}),
          workspaceId: ws.workspaceId,
          ...(opts.body === undefined ? {} : { body: opts.body }),
          ...(opts.headers ? { headers: opts.headers } : {}),
          idempotencyKey: false,
        });
      }
    } catch (e) {
      tally.record(route, 'network', performance.now() - t0, false, (e as Error).message);
      return null;
    }
    const ok = (res.status >= 200 && res.status < 300) || (opts.allow ?? []).includes(res.status);
    tally.record(route, res.status, performance.now() - t0, ok, res.text);
    return res.status >= 200 && res.status < 300 ? (res.body ?? {}) : null;
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * One lane of the soak: an endless cycle through every route family, each step making what it
 * reads and removing what it made where the API can (so the database does not grow without
 * bound either, and a memory slope is the server's, not the data's). Renders, revisions and
 * audit events do accumulate, as they would in a day of use.
 */
export async function soakLane(base: string, ws: SoakWorkspace, lane: number, tally: MixTally, stop: { now: boolean }): Promise<void> {
  const call = caller(base, ws, tally);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `wsp-soak-${lane}-`));
  // What the lane keeps across cycles: one install and one dashboard it edits (histories grow as in real use).
  const pkg = await call('POST /v1/packages', '/v1/packages', { body: { name: `soak-${lane}-${Date.now()}` } });
  const v1 = pkg && (await call('POST /v1/packages/{id}/versions', `/v1/packages/${pkg.id}/versions`, { body: { semver: '1.0.0', files: { 'index.html': '<h1>{{title}}</h1>\n' } } }));
  const install = v1 && (await call('POST /v1/installs', '/v1/installs', { body: { name: `soak-${lane}-${Date.now()}`, package_id: pkg.id, version_id: v1.id, values: { title: 'start' } } }));
  // And one under review: each of its later renders opens a change request (changeRequestSteps).
  const reviewed =
    v1 &&
    (await call('POST /v1/installs', '/v1/installs', {
      body: { name: `soak-${lane}-review-${Date.now()}`, package_id: pkg.id, version_id: v1.id, values: { title: 'start' }, delivery: 'change_request', required_approvals: 1 },
    }));
  let machine: { id: string; resumed: boolean } | null = null;
  try {
    for (let n = 0; !stop.now; n++) {
      const tag = `soak-${lane}-${n}-${Date.now()}`;
      // Platform and identity.
      await call('GET /healthz', '/healthz', { credential: null });
      await call('GET /readyz', '/readyz', { credential: null });
      if (n % 5 === 0) await call('GET /license', '/license', { credential: null });
      if (n % 5 === 0) await call('GET /v1/auth/providers', '/v1/auth/providers', { credential: null });
      await call('GET /v1/me', '/v1/me');
      if (n % 3 === 0) await call('GET /v1/me/events', '/v1/me/events?limit=10');
      await call('GET /v1/workspaces', '/v1/workspaces');
      const w = await call('GET /v1/workspaces/{id}', `/v1/workspaces/${ws.workspaceId}`);
      if (w && n % 5 === 0) await call('PATCH /v1/workspaces/{id}', `/v1/workspaces/${ws.workspaceId}`, { body: { name: `Soak ${n % 7}` }, headers: { 'if-match': w.etag }, allow: [409] });
      await call('GET /v1/workspaces/{id}/members', `/v1/workspaces/${ws.workspaceId}/members`);
      await call('GET /v1/workspaces/{id}/quotas', `/v1/workspaces/${ws.workspaceId}/quotas`);
      if (lane === 0 && n % 3 === 0) {
        await call('PATCH /v1/workspaces/{id}/members/{user_id}', `/v1/workspaces/${ws.workspaceId}/members/${ws.memberUserId}`, { body: { role: n % 2 ? 'admin' : 'member' } });
      }
      // Tokens: made, used, listed conditionally, revoked.
      const tok = await call('POST /v1/api_tokens', '/v1/api_tokens', { body: { name: tag } });
      if (tok) {
        await call('GET /v1/secrets', '/v1/secrets?limit=5', { credential: tok.token });
        const list = await api(base, 'GET', '/v1/api_tokens?limit=5', { credential: ws.session, workspaceId: ws.workspaceId });
        tally.record('GET /v1/api_tokens', list.status, 0, list.status === 200, list.text);
        const etag = list.headers.get('etag');
        if (etag) await call('GET /v1/api_tokens', '/v1/api_tokens?limit=5', { headers: { 'if-none-match': etag }, allow: [304] });
        await call('DELETE /v1/api_tokens/{id}', `/v1/api_tokens/${tok.id}`);
      }
      // Secrets: versions, access, state changes, deletion.
      const secret = await call('POST /v1/secrets', '/v1/secrets', { body: { name: tag } });
      if (secret) {
        const sv = await call('POST /v1/secrets/{id}/versions', `/v1/secrets/${secret.id}/versions`, { body: { data: b64(`${tag}-1`) } });
        await call('POST /v1/secrets/{id}/versions', `/v1/secrets/${secret.id}/versions`, { body: { data: b64(`${tag}-2`) } });
        await call('GET /v1/secrets/{id}', `/v1/secrets/${secret.id}`);
        await call('GET /v1/secrets/{id}/versions', `/v1/secrets/${secret.id}/versions`);
        if (sv) {
          const got = await call('GET /v1/secrets/{id}/versions/{vid}:access', `/v1/secrets/${secret.id}/versions/${sv.id}:access`);
          if (got && got.data !== b64(`${tag}-1`)) tally.unexpected.push(`secret ${secret.id}: payload ${got.data}`);
          const v = await call('GET /v1/secrets/{id}/versions/{vid}', `/v1/secrets/${secret.id}/versions/${sv.id}`);
          const off = v && (await call('POST /v1/secrets/{id}/versions/{vid}:disable', `/v1/secrets/${secret.id}/versions/${sv.id}:disable`, { body: {}, headers: { 'if-match': v.etag } }));
          const on = off && (await call('POST /v1/secrets/{id}/versions/{vid}:enable', `/v1/secrets/${secret.id}/versions/${sv.id}:enable`, { body: {}, headers: { 'if-match': off.etag } }));
          if (on) await call('POST /v1/secrets/{id}/versions/{vid}:destroy', `/v1/secrets/${secret.id}/versions/${sv.id}:destroy`, { body: {}, headers: { 'if-match': on.etag } });
        }
        const last = await call('GET /v1/secrets/{id}', `/v1/secrets/${secret.id}`);
        if (last) await call('DELETE /v1/secrets/{id}', `/v1/secrets/${secret.id}`, { headers: { 'if-match': last.etag } });
      }
      // Snippets and dashboards: edits, revisions, restores, archive, deletion.
      const sn = await call('POST /v1/snippets', '/v1/snippets', { body: { name: tag, source: `select '${tag}'` } });
      if (sn) {
        const sn2 = await call('PATCH /v1/snippets/{id}', `/v1/snippets/${sn.id}`, { body: { source: `select '${tag}', 2` }, headers: { 'if-match': sn.etag } });
        await call('GET /v1/snippets/{id}', `/v1/snippets/${sn.id}`);
        const d = sn2 && (await call('POST /v1/dashboards', '/v1/dashboards', { body: dashboardBody(tag, sn2) }));
        if (d) {
          const d2 = await call('PATCH /v1/dashboards/{id}', `/v1/dashboards/${d.id}`, { body: { name: `${tag} renamed`, summary: 'soak' }, headers: { 'if-match': d.etag } });
          await call('GET /v1/dashboards/{id}', `/v1/dashboards/${d.id}`);
          await call('GET /v1/dashboards/{id}/revisions', `/v1/dashboards/${d.id}/revisions?limit=10`);
          await call('GET /v1/dashboards/{id}/revisions/{revision_id}', `/v1/dashboards/${d.id}/revisions/${d.current_revision_id}`);
          const d3 =
            d2 &&
            (await call('POST /v1/dashboards/{id}/revisions/{revision_id}:restore', `/v1/dashboards/${d.id}/revisions/${d.current_revision_id}:restore`, {
              body: {},
              headers: { 'if-match': d2.etag },
            }));
          if (d3) await call('POST /v1/dashboards/{id}:reset', `/v1/dashboards/${d.id}:reset`, { body: {}, headers: { 'if-match': d3.etag } });
          const gone = await call('GET /v1/dashboards/{id}', `/v1/dashboards/${d.id}`);
          if (gone) await call('DELETE /v1/dashboards/{id}', `/v1/dashboards/${d.id}`, { headers: { 'if-match': gone.etag } });
        }
        const archived = await call('POST /v1/snippets/{id}:archive', `/v1/snippets/${sn.id}:archive`, { body: {}, headers: { 'if-match': (sn2 ?? sn).etag } });
        const active = archived && (await call('POST /v1/snippets/{id}:unarchive', `/v1/snippets/${sn.id}:unarchive`, { body: {}, headers: { 'if-match': archived.etag } }));
        if (active) await call('DELETE /v1/snippets/{id}', `/v1/snippets/${sn.id}`, { headers: { 'if-match': active.etag } });
      }
      await call('GET /v1/snippets', '/v1/snippets?limit=10');
      await call('GET /v1/dashboards', '/v1/dashboards?limit=10');
      // Packages, installs, renders, restores, the repository over git.
      if (pkg && install) {
        await call('GET /v1/packages', '/v1/packages?limit=10');
        await call('GET /v1/packages/{id}', `/v1/packages/${pkg.id}`);
        await call('GET /v1/packages/{id}/versions', `/v1/packages/${pkg.id}/versions`);
        await call('GET /v1/packages/{id}/versions/{version_id}', `/v1/packages/${pkg.id}/versions/${v1.id}`);
        await call('POST /v1/packages/{id}/versions/{version_id}:preview', `/v1/packages/${pkg.id}/versions/${v1.id}:preview`, { body: { values: { title: tag } } });
        const inst = await call('GET /v1/installs/{id}', `/v1/installs/${install.id}`);
        if (inst) await call('PATCH /v1/installs/{id}', `/v1/installs/${install.id}`, { body: { values: { title: tag } }, headers: { 'if-match': inst.etag }, allow: [409] });
        await call('GET /v1/installs', '/v1/installs?limit=10');
        const renders = await call('GET /v1/installs/{id}/renders', `/v1/installs/${install.id}/renders?limit=5`);
        const done = renders?.data?.find((r: { state: string }) => r.state === 'succeeded');
        if (done) {
          await call('GET /v1/renders/{id}', `/v1/renders/${done.id}`);
          if (done.operation_id) await call('GET /v1/operations/{id}', `/v1/operations/${done.operation_id}`);
          await call('GET /v1/renders/{id}/files', `/v1/renders/${done.id}/files`);
          if (n % 3 === 2) {
            const now = await call('GET /v1/installs/{id}', `/v1/installs/${install.id}`);
            // 409: a render of this lane's PATCH still running moves the etag.
            if (now)
              await call('POST /v1/installs/{id}:restore', `/v1/installs/${install.id}:restore`, {
                body: { render_id: done.id },
                headers: { 'if-match': now.etag, 'idempotency-key': tag },
                allow: [409],
              });
          }
        }
        // Now and then a package and an install of it, made and deleted (the install first: its
        // render, queued or running, is cancelled and its repository removed by a job).
        if (n % 4 === 1) {
          const p2 = await call('POST /v1/packages', '/v1/packages', { body: { name: `${tag}-gone` } });
          const pv = p2 && (await call('POST /v1/packages/{id}/versions', `/v1/packages/${p2.id}/versions`, { body: { semver: '1.0.0', files: { 'a.txt': '{{title}}\n' } } }));
          const i2 = pv && (await call('POST /v1/installs', '/v1/installs', { body: { name: `${tag}-gone`, package_id: p2.id, version_id: pv.id, values: { title: tag } } }));
          // Its first render may land (a new etag) before the delete.
          if (i2) await deleteCurrent(call, 'installs', i2);
          const p3 = p2 && (await call('GET /v1/packages/{id}', `/v1/packages/${p2.id}`));
          if (p3) await call('DELETE /v1/packages/{id}', `/v1/packages/${p2.id}`, { headers: { 'if-match': p3.etag } });
        }
        if (reviewed) await changeRequestSteps(call, ws, reviewed.id, tag, n + lane);
        const repo = await call('GET /v1/installs/{id}/repository', `/v1/installs/${install.id}/repository`);
        // The clone URL names the public address (WSP_PUBLIC_URL): the same path on the server's own.
        if (repo?.head_commit_sha && n % 3 === 0) await gitClone(`${base}/v1/installs/${install.id}/repository.git`, ws, path.join(work, tag), tally);
      }
      // Compute: a machine made, run, suspended, resumed, deleted over a few cycles.
      await call('GET /v1/compute/configs', '/v1/compute/configs');
      await call('GET /v1/compute/configs/{id}', `/v1/compute/configs/${ws.computeConfigId}`);
      await call('GET /v1/compute/catalog', '/v1/compute/catalog');
      await call('GET /v1/machines', '/v1/machines?limit=10');
      await call('GET /v1/compute/suspensions', '/v1/compute/suspensions');
      // One machine per lane at a time: made, suspended, resumed (by the machine's route or the
      // suspension's, by turns), deleted. 409: between states (its provider job has not finished).
      if (!machine) {
        const made = await call('POST /v1/machines', '/v1/machines', { body: { compute_config_id: ws.computeConfigId, server_type: 'cx22', hostname: `soak-${lane}-${n}` } });
        machine = made && { id: made.id, resumed: false };
      } else {
        const m = await call('GET /v1/machines/{id}', `/v1/machines/${machine.id}`);
        if (m?.status === 'running' && !machine.resumed) await call('POST /v1/machines/{id}:suspend', `/v1/machines/${m.id}:suspend`, { body: {}, headers: { 'if-match': m.etag }, allow: [409] });
        else if (m?.status === 'suspended' && (n + lane) % 2 === 0) {
          if (await call('POST /v1/machines/{id}:resume', `/v1/machines/${m.id}:resume`, { body: {}, headers: { 'if-match': m.etag }, allow: [409] })) machine.resumed = true;
        } else if (m?.status === 'suspended') {
          const s = ((await call('GET /v1/compute/suspensions', '/v1/compute/suspensions')) ?? []).find(
            (x: { machine_id: string; state?: string; status?: string }) => x.machine_id === m.id && (x.state ?? x.status) !== 'resumed',
          );
          if (s && (await call('POST /v1/compute/suspensions/{id}:resume', `/v1/compute/suspensions/${s.id}:resume`, { body: {}, headers: { 'if-match': s.etag }, allow: [409] })))
            machine.resumed = true;
        } else if (m?.status === 'running' && machine.resumed) {
          await call('DELETE /v1/machines/{id}', `/v1/machines/${m.id}`, { headers: { 'if-match': m.etag }, allow: [409] });
          machine = null;
        }
      }
      // Notifications, audit, webhooks, metrics, operations.
      const notes = await call('GET /v1/notifications', '/v1/notifications?limit=10');
      if (notes?.data?.[0]) await call('PATCH /v1/notifications/{id}/read', `/v1/notifications/${notes.data[0].id}/read`);
      await call('GET /v1/audit_events', '/v1/audit_events?limit=10');
      const hook = await call('POST /v1/webhooks', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/soak', event_types: ['snippet.*'], description: tag } });
      if (hook) {
        await call('PATCH /v1/webhooks/{id}', `/v1/webhooks/${hook.id}`, { body: { description: `${tag} 2` }, headers: { 'if-match': hook.etag } });
        const delivery = await call('POST /v1/webhooks/{id}:test', `/v1/webhooks/${hook.id}:test`, { body: {} });
        await call('GET /v1/webhooks/{id}/deliveries', `/v1/webhooks/${hook.id}/deliveries`);
        if (delivery) await call('POST /v1/webhooks/{id}/deliveries/{did}:retry', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}:retry`, { body: {}, allow: [409] });
        if (delivery) await call('GET /v1/webhooks/{id}/deliveries/{did}/attempts', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/attempts`);
        // Its test delivery failing may open its circuit (a new etag) before the delete.
        const h = await call('GET /v1/webhooks/{id}', `/v1/webhooks/${hook.id}`);
        if (h) await deleteCurrent(call, 'webhooks', h);
      }
      await call('GET /v1/webhooks', '/v1/webhooks');
      const metrics = await call('GET /v1/platform_metrics', '/v1/platform_metrics');
      const key = metrics?.data?.[n % Math.max(1, metrics.data.length)]?.key;
      if (key) await call('GET /v1/platform_metrics/{key}/series', `/v1/platform_metrics/${key}/series`);
      if (lane === 2 && n % 3 === 0) {
        const cfg = await call('POST /v1/compute/configs', '/v1/compute/configs', { body: { name: tag, provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' } });
        const c = cfg && (await call('GET /v1/compute/configs/{id}', `/v1/compute/configs/${cfg.id}`));
        if (c) await call('DELETE /v1/compute/configs/{id}', `/v1/compute/configs/${c.id}`, { headers: { 'if-match': c.etag } });
      }
      // Regions and clusters (issue 52): listed by every lane, one made, renamed and deleted now and then.
      await call('GET /v1/regions', '/v1/regions');
      await call('GET /v1/regions/{id}', '/v1/regions/fsn1');
      await call('GET /v1/clusters', '/v1/clusters?limit=10');
      if (lane === 1 && n % 3 === 0) {
        const name = `soak-${lane}-${n}-${Math.random().toString(36).slice(2, 8)}`;
        const cl = await call('POST /v1/clusters', '/v1/clusters', { body: { name, region: 'fsn1', description: tag } });
        const renamed = cl && (await call('PATCH /v1/clusters/{id}', `/v1/clusters/${cl.id}`, { body: { name: `${name}-2` }, headers: { 'if-match': cl.etag } }));
        const got = renamed && (await call('GET /v1/clusters/{id}', `/v1/clusters/${cl.id}`));
        if (got) await call('DELETE /v1/clusters/{id}', `/v1/clusters/${cl.id}`, { headers: { 'if-match': got.etag } });
      }
      if (lane === 0 && n % 4 === 0) await call('GET /metrics', '/metrics', { credential: null });
      // Sessions and device logins: argon2 and the per-address limit make them the rare steps.
      if (lane === 0 && n % 10 === 0) await signInAndOut(call, ws, n % 20 === 0);
      if (lane === 1 && n % 5 === 0) await deviceLogin(call, n % 10 === 5);
      // Invitations: made and revoked.
      const inv = await call('POST /v1/workspaces/{id}/invitations', `/v1/workspaces/${ws.workspaceId}/invitations`, { body: { email: `${tag}@example.com`, role: 'member' } });
      await call('GET /v1/workspaces/{id}/invitations', `/v1/workspaces/${ws.workspaceId}/invitations`);
      if (inv) await call('DELETE /v1/workspaces/{id}/invitations/{inv}', `/v1/workspaces/${ws.workspaceId}/invitations/${inv.id}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Repository change requests (issue 51) on the lane's install under review: the open one (opened
 * by the render of the previous cycle's PATCH, by the owner) is listed, read, diffed, retitled and
 * approved by the member, then by turns merged, closed and reopened, or closed; then a PATCH starts
 * the next render, which supersedes whatever is still open. A 409 is the lane's own render job
 * moving the change request between the read and the write (superseded, re-parented: its etag
 * moved), or a reopen after a newer render.
 */
/**
 * Deletes a resource whose etag background work may move (a render landing, a delivery opening
 * a circuit): on 409 it reads the resource again and tries again, as a client does.
 */
async function deleteCurrent(call: Call, collection: 'installs' | 'webhooks', resource: { id: string; etag: string }): Promise<void> {
  let etag: string | undefined = resource.etag;
  for (let t = 0; etag && t < 5; t++) {
    if (await call(`DELETE /v1/${collection}/{id}`, `/v1/${collection}/${resource.id}`, { headers: { 'if-match': etag }, allow: [409] })) return;
    etag = (await call(`GET /v1/${collection}/{id}`, `/v1/${collection}/${resource.id}`))?.etag;
  }
}

async function changeRequestSteps(call: Call, ws: SoakWorkspace, installId: string, tag: string, turn: number): Promise<void> {
  const url = (id: string, rest = '') => `/v1/repository_change_requests/${id}${rest}`;
  await call('GET /v1/repository_change_requests', '/v1/repository_change_requests?limit=10');
  const open = await call('GET /v1/repository_change_requests', `/v1/repository_change_requests?install_id=${installId}&state=open&limit=5`);
  const first = open?.data?.[0] as { id: string } | undefined;
  if (first) {
    const read = await call('GET /v1/repository_change_requests/{id}', url(first.id));
    await call('GET /v1/repository_change_requests/{id}/diff', url(first.id, '/diff'));
    const titled = read && (await call('PATCH /v1/repository_change_requests/{id}', url(first.id), { body: { title: `Soak ${tag}` }, headers: { 'if-match': read.etag }, allow: [409] }));
    const approved =
      titled && (await call('POST /v1/repository_change_requests/{id}:approve', url(first.id, ':approve'), { credential: ws.memberSession, headers: { 'if-match': titled.etag }, allow: [409] }));
    if (approved && turn % 3 === 0) {
      await call('POST /v1/repository_change_requests/{id}:merge', url(first.id, ':merge'), {
        body: { head_commit_sha: approved.head_commit_sha },
        headers: { 'if-match': approved.etag },
        allow: [409],
      });
    } else if (approved) {
      const closed = await call('POST /v1/repository_change_requests/{id}:close', url(first.id, ':close'), { headers: { 'if-match': approved.etag }, allow: [409] });
      if (closed && turn % 3 === 1) await call('POST /v1/repository_change_requests/{id}:reopen', url(first.id, ':reopen'), { headers: { 'if-match': closed.etag }, allow: [409] });
    }
  }
  const inst = await call('GET /v1/installs/{id}', `/v1/installs/${installId}`);
  if (inst) await call('PATCH /v1/installs/{id}', `/v1/installs/${installId}`, { body: { values: { title: tag } }, headers: { 'if-match': inst.etag }, allow: [409] });
}

function dashboardBody(tag: string, snippet: { id: string; etag: string }) {
  return {
    name: tag,
    description: 'soak',
    purpose: 'workspace_overview',
    filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
    default_filter_values: {},
    widgets: [
      {
        widget_type: 'snippet',
        position: 1,
        title: 'w',
        col_span: 4,
        height: 'tall',
        drill_down: null,
        visualization_options: {},
        freshness_policy: { mode: 'max_age', max_age_seconds: 300 },
        snippet_id: snippet.id,
        snippet_etag: snippet.etag,
        input_bindings: {},
        visualization: 'table',
        refresh_policy: { mode: 'interval', interval_seconds: 60 },
        display_type: 'table',
      },
    ],
  };
}

async function gitClone(url: string, ws: SoakWorkspace, dir: string, tally: MixTally): Promise<void> {
  const t0 = performance.now();
  try {
    await execFileP('git', ['-c', `http.extraHeader=Authorization: Bearer ${ws.apiToken}`, 'clone', '--quiet', '--bare', url, dir], {
      env: { PATH: process.env.PATH, HOME: os.tmpdir(), GIT_TERMINAL_PROMPT: '0' },
      timeout: 60_000,
    });
    tally.record('git clone (info/refs + git-upload-pack)', 200, performance.now() - t0, true, '');
  } catch (e) {
    // stderr only: the command line carries the token.
    tally.record('git clone (info/refs + git-upload-pack)', 'failed', performance.now() - t0, false, String((e as { stderr?: string }).stderr ?? 'no stderr'));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

async function signInAndOut(call: Call, ws: SoakWorkspace, byId: boolean): Promise<void> {
  const s = await call('POST /v1/sessions', '/v1/sessions', { body: { email: ws.email, password: ws.password }, credential: null });
  if (!s) return;
  const token = s.session_token ?? s.token;
  const list = await call('GET /v1/sessions', '/v1/sessions', { credential: token });
  const mine = list?.data?.find((x: { current: boolean }) => x.current);
  // Ended one way or the other: by the session itself, or by another session of the user.
  if (mine && byId) await call('DELETE /v1/sessions/{id}', `/v1/sessions/${mine.id}`);
  else await call('DELETE /v1/sessions/current', '/v1/sessions/current', { credential: token });
}

/** RFC 8628 from start to token; 429 slow_down is the documented per-address limit of started logins. */
async function deviceLogin(call: Call, deny: boolean): Promise<void> {
  await call('GET /.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server', { credential: null });
  const start = await call('POST /v1/oauth/device_authorization', '/v1/oauth/device_authorization', { form: { client_id: 'wsp-cli' }, allow: [429] });
  if (!start) return;
  if (deny) {
    await call('POST /v1/oauth/device/deny', '/v1/oauth/device/deny', { body: { user_code: start.user_code } });
    return;
  }
  const ok = await call('POST /v1/oauth/device/approve', '/v1/oauth/device/approve', { body: { user_code: start.user_code } });
  if (!ok) return;
  const tok = await call('POST /v1/oauth/token', '/v1/oauth/token', { form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: start.device_code, client_id: 'wsp-cli' } });
  if (tok?.access_token) await call('GET /v1/me', '/v1/me', { credential: tok.access_token });
}
