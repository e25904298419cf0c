import { randomUUID } from 'node:crypto';
import { stringFlag, UsageError } from '../args.js';
import { apiAs, send, workspaceClient } from './api.js';
import { idArg, intFlag, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { readJsonObject } from './input.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { printFields, printJson, time } from './output.js';
import { noWait, WAIT_DETAILS, WAIT_USAGE, waitForOperation, waitTimeout } from './operations.js';
import { confirm } from './confirm.js';
import type { CommandContext } from './command.js';
import type { Install } from '@workspace-platform/sdk';

function printInstall(ctx: CommandContext, i: Install, said?: string): void {
  if (ctx.json) return printJson(ctx.io, i);
  if (said) ctx.io.err.write(`${said}\n`);
  printFields(ctx.io, [
    ['id', i.id],
    ['name', i.name],
    ['package', i.package_id],
    ['version', i.current_version?.semver ?? '-'],
    ['desired', i.desired_version.semver],
    ['auto-update', i.automatic_updates_enabled ? 'on' : 'off'],
    ['delivery', i.delivery === 'change_request' ? `change requests, ${i.required_approvals} approval${i.required_approvals === 1 ? '' : 's'} needed` : 'direct'],
    ['waiting', i.open_change_request_id ?? '-'],
    ['cluster', i.cluster_id ?? '-'],
    ['last render', i.last_render ? `${i.last_render.id} (${i.last_render.state})` : '-'],
    ['values', JSON.stringify(i.values)],
    ['updated', time(i.updated_at)],
  ]);
}

/**
 * After a write that may have queued a render: the render it queued (none when the write changed
 * nothing that renders), waited for unless --no-wait; a failed render is exit 1 with its error,
 * so `wsp installs update ... && deploy` never deploys what did not render.
 */
async function followRender(ctx: CommandContext, server: string, api: ReturnType<typeof apiAs>, install: Install, before: string | null, said: string): Promise<void> {
  const queued = install.last_render;
  if (!queued || queued.id === before) return printInstall(ctx, install, `${said}.`);
  const render = await send(server, api.GET('/v1/renders/{id}', { params: { path: { id: queued.id } } }));
  if (noWait(ctx)) return printInstall(ctx, install, `${said}; render ${render.id} is queued (operation ${render.operation_id}).`);
  const operation = await waitForOperation(ctx, server, api, render.operation_id, waitTimeout(ctx), `Rendering ${render.id} (operation ${render.operation_id})`);
  const now = await send(server, api.GET('/v1/installs/{id}', { params: { path: { id: install.id } } }));
  if (operation.error) {
    if (ctx.json) printJson(ctx.io, now);
    throw new CliError(`render ${render.id} failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
  }
  const done = await send(server, api.GET('/v1/renders/{id}', { params: { path: { id: render.id } } }));
  if (done.state === 'awaiting_merge')
    return printInstall(ctx, now, `${said}; render ${render.id} waits for review in change request ${done.repository_change_request_id} (wsp changes show ${done.repository_change_request_id}).`);
  printInstall(ctx, now, `${said}; render ${render.id} succeeded.`);
}

export const installsList: Command = {
  name: 'installs list',
  usage: `[--cluster cl_ID] ${listUsage(100)}`,
  summary: "the workspace's installs (of one cluster with --cluster)",
  flags: [...LIST_FLAGS, 'cluster'],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const cluster = stringFlag(ctx.args, 'cluster');
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/installs', { params: { query: { ...query, ...(cluster ? { cluster_id: cluster } : {}) } } }));
    printListed(
      ctx,
      page,
      [
        ['id', (i) => i.id],
        ['name', (i) => i.name],
        ['version', (i) => i.current_version?.semver ?? '-'],
        ['desired', (i) => i.desired_version.semver],
        ['last render', (i) => i.last_render?.state ?? '-'],
        ['cluster', (i) => i.cluster_id ?? '-'],
        ['updated', (i) => time(i.updated_at)],
      ],
      'No installs.',
    );
  },
};

export const installsGet: Command = {
  name: 'installs get',
  usage: 'inst_ID',
  summary: 'one install: its versions, values and last render',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    printInstall(ctx, await send(c.server, api.GET('/v1/installs/{id}', { params: { path: { id } } })));
  },
};

const valuesOf = async (ctx: CommandContext) => {
  const file = stringFlag(ctx.args, 'values');
  return file === undefined ? undefined : readJsonObject(ctx.io, 'values', file);
};

const DELIVERIES = ['direct', 'change_request'] as const;
/** --delivery and --required-approvals, as the body takes them (docs/spec-gaps.md, "Repository change requests"). */
function review(ctx: CommandContext): { delivery?: (typeof DELIVERIES)[number]; required_approvals?: number } {
  const delivery = stringFlag(ctx.args, 'delivery');
  if (delivery !== undefined && !(DELIVERIES as readonly string[]).includes(delivery)) throw new UsageError(`--delivery must be direct or change_request, got "${delivery}"`);
  const approvals = intFlag(ctx, 'required-approvals', 0, 10);
  return { ...(delivery ? { delivery: delivery as (typeof DELIVERIES)[number] } : {}), ...(approvals !== undefined ? { required_approvals: approvals } : {}) };
}

const autoUpdate = (ctx: CommandContext) => (ctx.args.flags['auto-update'] === true ? true : ctx.args.flags['no-auto-update'] === true ? false : undefined);

export const installsCreate: Command = {
  name: 'installs create',
  usage: `--name NAME --package pkg_ID --package-version pkgv_ID [--values FILE] [--auto-update] [--cluster cl_ID] [--delivery direct|change_request] [--required-approvals 0-10] ${WAIT_USAGE}`,
  summary: 'install a package version: it is rendered into a new git repository, and waits for the render',
  flags: ['name', 'package', 'package-version', 'values', 'cluster', 'timeout', 'delivery', 'required-approvals'],
  booleans: ['auto-update', 'no-wait'],
  details: `--values FILE ("-": stdin) is a JSON object of template values. ${WAIT_DETAILS}`,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    waitTimeout(ctx);
    const values = await valuesOf(ctx);
    const body = {
      name: stringFlag(ctx.args, 'name', true),
      package_id: stringFlag(ctx.args, 'package', true),
      version_id: stringFlag(ctx.args, 'package-version', true),
      ...(values ? { values } : {}),
      ...(autoUpdate(ctx) !== undefined ? { automatic_updates_enabled: autoUpdate(ctx) } : {}),
      ...review(ctx),
      ...(typeof ctx.args.flags.cluster === 'string' ? { cluster_id: ctx.args.flags.cluster } : {}),
    };
    const { c, api } = workspaceClient(ctx);
    const made = await send(c.server, api.POST('/v1/installs', { body }));
    await followRender(ctx, c.server, api, made, null, `Created ${made.id}`);
  },
};

export const installsUpdate: Command = {
  name: 'installs update',
  usage: `inst_ID [--package-version pkgv_ID] [--values FILE] [--auto-update | --no-auto-update] [--cluster cl_ID | --no-cluster] [--delivery direct|change_request] [--required-approvals 0-10] ${WAIT_USAGE}`,
  summary: 'change the version, values, cluster or review of an install; a new render when the version or values change, waited for',
  flags: ['package-version', 'values', 'cluster', 'timeout', 'delivery', 'required-approvals'],
  booleans: ['auto-update', 'no-auto-update', 'no-cluster', 'no-wait'],
  details: `Reads the install's etag for If-Match. --cluster places it on a cluster, --no-cluster on none. ${WAIT_DETAILS}`,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    waitTimeout(ctx);
    const values = await valuesOf(ctx);
    const version = stringFlag(ctx.args, 'package-version');
    const auto = autoUpdate(ctx);
    const cluster = ctx.args.flags['no-cluster'] === true ? null : stringFlag(ctx.args, 'cluster');
    const body = {
      ...(version ? { desired_version_id: version } : {}),
      ...(values ? { values } : {}),
      ...(auto !== undefined ? { automatic_updates_enabled: auto } : {}),
      ...(cluster !== undefined ? { cluster_id: cluster } : {}),
      ...review(ctx),
    };
    if (Object.keys(body).length === 0)
      throw new UsageError('nothing to change: give --package-version, --values, --auto-update/--no-auto-update, --cluster/--no-cluster, --delivery or --required-approvals');
    const { c, api } = workspaceClient(ctx);
    const current = await send(c.server, api.GET('/v1/installs/{id}', { params: { path: { id } } }));
    const changed = await send(c.server, api.PATCH('/v1/installs/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body }));
    await followRender(ctx, c.server, api, changed, current.last_render?.id ?? null, `Updated ${changed.id}`);
  },
};

export const installsRenders: Command = {
  name: 'installs renders',
  usage: `inst_ID ${listUsage(100)}`,
  summary: "an install's renders, newest first: state, version, commit",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/installs/{id}/renders', { params: { path: { id }, query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (r) => r.id],
        ['state', (r) => r.state],
        ['version', (r) => r.package_version_id],
        ['commit', (r) => r.commit_sha?.slice(0, 10)],
        ['created', (r) => time(r.created_at)],
        ['message', (r) => r.message],
      ],
      'No renders.',
    );
  },
};

export const installsRepository: Command = {
  name: 'installs repository',
  usage: 'inst_ID',
  summary: "where to clone an install's repository, and its head commit",
  details: 'Clone it with git after `wsp auth setup-git`, or with a token as the password of the URL.',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const repo = await send(c.server, api.GET('/v1/installs/{id}/repository', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, repo);
    printFields(ctx.io, [
      ['clone', repo.clone_url],
      ['head', repo.head_commit_sha],
    ]);
  },
};

export const renderGet: Command = {
  name: 'renders get',
  usage: 'rnd_ID',
  summary: 'one render: its state, version, commit, and why it failed if it did',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the render id', 'rnd');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const r = await send(c.server, api.GET('/v1/renders/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, r);
    printFields(ctx.io, [
      ['id', r.id],
      ['install', r.install_id],
      ['state', r.state],
      ['version', r.package_version_id],
      ['commit', r.commit_sha],
      ['restored from', r.restored_from_render_id],
      ['message', r.message],
      ['created', time(r.created_at)],
      ['updated', time(r.updated_at)],
    ]);
  },
};

export const installsRestore: Command = {
  name: 'installs restore',
  usage: `inst_ID --render rnd_ID ${WAIT_USAGE}`,
  summary: 'restore a succeeded render as a new commit, and wait for it (progress on a terminal)',
  flags: ['render', 'timeout'],
  booleans: ['no-wait'],
  details: `Reads the install's etag for If-Match and sends an Idempotency-Key, so a retried request never restores twice.
${WAIT_DETAILS}`,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const renderId = stringFlag(ctx.args, 'render', true);
    if (!/^(rnd_)?[0-9A-Za-z]{1,60}$/.test(renderId)) throw new UsageError(`--render must look like rnd_<id>, got "${renderId}"`);
    const timeout = waitTimeout(ctx);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);

    const install = await send(c.server, api.GET('/v1/installs/{id}', { params: { path: { id } } }));
    const restored = await send(
      c.server,
      api.POST('/v1/installs/{id}:restore', {
        params: { path: { id }, header: { 'if-match': install.etag, 'idempotency-key': randomUUID() } },
        body: { render_id: renderId },
      }),
    );
    const opId = restored.render.operation_id;
    if (noWait(ctx)) {
      if (ctx.json) return printJson(ctx.io, restored);
      ctx.io.out.write(`Restoring ${restored.render.id}: operation ${opId}.\n`);
      return;
    }

    const operation = await waitForOperation(ctx, c.server, api, opId, timeout, `Restoring ${restored.render.id} (operation ${opId})`);
    const render = await send(c.server, api.GET('/v1/renders/{id}', { params: { path: { id: restored.render.id } } }));
    if (ctx.json) printJson(ctx.io, { install: restored.install, render, operation });
    if (operation.error) throw new CliError(`restore failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
    if (ctx.json) return;
    printFields(ctx.io, [
      ['install', `${install.name} (${install.id})`],
      ['render', `${render.id} (${render.state})`],
      ['restored from', render.restored_from_render_id],
      ['commit', render.commit_sha],
    ]);
  },
};

export const installsDelete: Command = {
  name: 'installs delete',
  usage: `inst_ID ${WAIT_USAGE}`,
  summary: 'delete an install: it is gone at once, its repository is removed; waits for the removal',
  flags: ['timeout'],
  booleans: ['no-wait'],
  details: `Asks first (or --yes), then reads the install's etag for If-Match, so a change someone made meanwhile is not deleted unseen. Its renders under way are canceled; its renders stay readable by id.
${WAIT_DETAILS}`,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const timeout = waitTimeout(ctx);
    const { c, api } = workspaceClient(ctx);
    await confirm(ctx, `Delete install ${id}`, 'Its git repository is removed and its renders under way are canceled.');
    const install = await send(c.server, api.GET('/v1/installs/{id}', { params: { path: { id } } }));
    const { operation_id: opId } = await send(c.server, api.DELETE('/v1/installs/{id}', { params: { path: { id }, header: { 'if-match': install.etag } } }));
    if (noWait(ctx)) {
      if (ctx.json) return printJson(ctx.io, { id: install.id, operation_id: opId });
      ctx.io.out.write(`Deleting ${install.id}: operation ${opId}.\n`);
      return;
    }
    const operation = await waitForOperation(ctx, c.server, api, opId, timeout, `Deleting ${install.id} (operation ${opId})`);
    if (ctx.json) printJson(ctx.io, { id: install.id, deleted: operation.error === null, operation });
    if (operation.error) throw new CliError(`delete failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
    if (!ctx.json) ctx.io.out.write(`Deleted ${install.id}.\n`);
  },
};

export const INSTALL_COMMANDS = [installsList, installsGet, installsCreate, installsUpdate, installsRenders, installsRepository, installsRestore, installsDelete];
