import { stringFlag, UsageError } from '../args.js';
import { send, workspaceClient } from './api.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { deleteCommand } from './deletes.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { printFields, printJson, printTable, time } from './output.js';
import type { Schemas } from '@workspace-platform/sdk';

type Cluster = Schemas['Cluster'];

export const regionsList: Command = {
  name: 'regions list',
  usage: '',
  summary: "the provider's regions and the server types each offers",
  details: 'What `wsp clusters create --region` and a compute config may name; a machine can only be of a type its region offers.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const regions = await send(c.server, api.GET('/v1/regions'));
    if (ctx.json) return printJson(ctx.io, regions);
    printTable(
      ctx.io,
      regions.data,
      [
        ['id', (r) => r.id],
        ['name', (r) => r.name],
        ['country', (r) => r.country],
        ['city', (r) => r.city],
        ['zone', (r) => r.network_zone],
        ['server types', (r) => r.server_types.join(' ')],
      ],
      'No regions.',
    );
  },
};

/** Its machines by status, the non-zero ones: `2 running, 1 failed`. */
const counts = (c: Cluster) =>
  Object.entries(c.machine_counts as Record<string, number>)
    .filter(([k, n]) => k !== 'total' && n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || 'none';

function printCluster(ctx: CommandContext, c: Cluster, said?: string): void {
  if (ctx.json) return printJson(ctx.io, c);
  if (said) ctx.io.err.write(`${said}\n`);
  printFields(ctx.io, [
    ['id', c.id],
    ['name', c.name],
    ['region', c.region ?? 'any (default cluster)'],
    ['status', c.status],
    ['machines', counts(c)],
    ['default', c.is_default ? 'yes' : 'no'],
    ['description', c.description ?? '-'],
    ['created', time(c.created_at)],
    ['updated', time(c.updated_at)],
  ]);
}

export const clustersList: Command = {
  name: 'clusters list',
  usage: listUsage(100),
  summary: "the workspace's clusters with their status and machines",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/clusters', { params: { query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (x) => x.id],
        ['name', (x) => x.name],
        ['region', (x) => x.region ?? 'any'],
        ['status', (x) => x.status],
        ['machines', (x) => x.machine_counts.total],
        ['default', (x) => (x.is_default ? 'yes' : '')],
      ],
      'No clusters.',
    );
  },
};

export const clustersGet: Command = {
  name: 'clusters get',
  usage: 'cl_ID',
  summary: 'one cluster: its region, status and machines by status',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the cluster id', 'cl');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    printCluster(ctx, await send(c.server, api.GET('/v1/clusters/{id}', { params: { path: { id } } })));
  },
};

export const clustersCreate: Command = {
  name: 'clusters create',
  usage: '--name NAME --region fsn1 [--description TEXT]',
  summary: 'make a cluster in a region (`wsp regions list`)',
  flags: ['name', 'region', 'description'],
  details: 'NAME: 1-63 of a-z, 0-9 and -, unique in the workspace. Only machines of compute configs of the region can join it.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const description = stringFlag(ctx.args, 'description');
    const body = { name: stringFlag(ctx.args, 'name', true), region: stringFlag(ctx.args, 'region', true), ...(description !== undefined ? { description } : {}) };
    const { c, api } = workspaceClient(ctx);
    const made = await send(c.server, api.POST('/v1/clusters', { body }));
    printCluster(ctx, made, `Created cluster ${made.id}.`);
  },
};

export const clustersRename: Command = {
  name: 'clusters rename',
  usage: 'cl_ID --name NEW [--description TEXT]',
  summary: 'rename a cluster (or change its description); the default cluster keeps its name',
  flags: ['name', 'description'],
  details: "Reads the cluster's etag for If-Match.",
  async run(ctx) {
    const id = idArg(ctx, 0, 'the cluster id', 'cl');
    noMoreArgs(ctx, 1);
    const name = stringFlag(ctx.args, 'name');
    const description = stringFlag(ctx.args, 'description');
    if (name === undefined && description === undefined) throw new UsageError('nothing to change: give --name or --description');
    const { c, api } = workspaceClient(ctx);
    const current = await send(c.server, api.GET('/v1/clusters/{id}', { params: { path: { id } } }));
    const body = { ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}) };
    const changed = await send(c.server, api.PATCH('/v1/clusters/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body }));
    printCluster(ctx, changed, `Updated ${changed.id}.`);
  },
};

export const clustersDelete = deleteCommand({
  name: 'clusters delete',
  summary: 'delete an empty cluster (refused, naming them, while it holds machines or installs)',
  noun: 'cluster',
  prefix: 'cl',
  path: '/v1/clusters/{id}',
});

export const CLUSTER_COMMANDS = [regionsList, clustersList, clustersGet, clustersCreate, clustersRename, clustersDelete];
