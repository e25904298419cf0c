import { stringFlag } from '../args.js';
import { type apiAs, send, workspaceClient } from './api.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { confirm } from './confirm.js';
import { deleteCommand } from './deletes.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { CliError, EXIT } from './exit-codes.js';
import { printFields, printJson, printTable, time } from './output.js';
import { noWait, WAIT_DETAILS, waitForOperation, waitTimeout } from './operations.js';

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

export const computeCatalog: Command = {
  name: 'compute catalog',
  usage: '',
  summary: 'what the provider offers: regions, images, server types with prices',
  details: 'The values a compute config (region, image, machine_type_filter) and a machine (server_type) may name.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const catalog = await send(c.server, api.GET('/v1/compute/catalog'));
    if (ctx.json) return printJson(ctx.io, catalog);
    ctx.io.out.write(`Provider: ${catalog.provider}\n\nRegions:\n`);
    printTable(
      ctx.io,
      catalog.regions,
      [
        ['id', (r) => r.id],
        ['name', (r) => r.name],
      ],
      'None.',
    );
    ctx.io.out.write('\nImages:\n');
    printTable(
      ctx.io,
      catalog.images,
      [
        ['id', (i) => i.id],
        ['name', (i) => i.name],
      ],
      'None.',
    );
    ctx.io.out.write('\nServer types:\n');
    printTable(
      ctx.io,
      catalog.server_types,
      [
        ['id', (t) => t.id],
        ['cores', (t) => t.cores],
        ['memory', (t) => `${t.memory_gb} GB`],
        ['disk', (t) => `${t.disk_gb} GB`],
        ['arch', (t) => t.architecture],
        ['from/month', (t) => euros(t.monthly_price_cents)],
        ['regions', (t) => t.prices.map((p) => p.region).join(' ')],
      ],
      'None.',
    );
  },
};

export const machinesList: Command = {
  name: 'machines list',
  usage: `[--cluster cl_ID] ${listUsage(100)}`,
  flags: [...LIST_FLAGS, 'cluster'],
  booleans: LIST_BOOLEANS,
  summary: "the workspace's machines, newest first (of one cluster with --cluster)",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const cluster = stringFlag(ctx.args, 'cluster');
    const { c, api } = workspaceClient(ctx);
    const machines = await listed(ctx, c.server, 100, (query) => api.GET('/v1/machines', { params: { query: { ...query, ...(cluster ? { cluster_id: cluster } : {}) } } }));
    printListed(
      ctx,
      machines,
      [
        ['id', (m) => m.id],
        ['hostname', (m) => m.hostname],
        ['type', (m) => m.server_type],
        ['region', (m) => m.location],
        ['status', (m) => m.status],
        ['cluster', (m) => m.cluster_id],
        ['ipv4', (m) => m.ipv4],
        ['created', (m) => time(m.created_at)],
      ],
      'No machines.',
    );
  },
};

/**
 * After a change that answered an operation: its id at once with --no-wait, else the wait (a
 * spinner on a terminal) and exit 1 if it failed.
 */
async function followOperation(
  ctx: CommandContext,
  c: { server: string },
  api: ReturnType<typeof apiAs>,
  machineId: string,
  opId: string | null | undefined,
  verb: string,
  done: string,
): Promise<void> {
  if (!opId) throw new CliError('the server answered without an operation', EXIT.FAILED);
  if (noWait(ctx)) {
    if (ctx.json) return printJson(ctx.io, { machine_id: machineId, operation_id: opId });
    ctx.io.out.write(`${verb} ${machineId}: operation ${opId}.\n`);
    return;
  }
  const operation = await waitForOperation(ctx, c.server, api, opId, waitTimeout(ctx), `${verb} ${machineId} (operation ${opId})`);
  if (ctx.json) printJson(ctx.io, { machine_id: machineId, operation });
  if (operation.error) throw new CliError(`${verb.toLowerCase()} ${machineId} failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
  if (!ctx.json) ctx.io.out.write(`${done} ${machineId}.\n`);
}

/** `delete`, `resume` and `suspend`: send under the machine's etag, then follow the operation. */
function machineChange(action: 'delete' | 'resume' | 'suspend'): Command {
  const verb = { delete: 'Deleting', resume: 'Resuming', suspend: 'Suspending' }[action];
  const done = { delete: 'Deleted', resume: 'Resumed', suspend: 'Suspended' }[action];
  return {
    name: `machines ${action}`,
    usage: 'mch_ID [--timeout 10m] [--no-wait]',
    summary: {
      delete: 'delete a machine: its server and snapshot at the provider, then the machine; waits until they are gone',
      resume: 'resume a suspended machine from its snapshot; waits until it runs',
      suspend: 'suspend a machine: a snapshot is kept and the server deleted until it resumes; waits until it is suspended',
    }[action],
    flags: ['timeout'],
    booleans: ['no-wait'],
    details: `Reads the machine's etag for If-Match. ${WAIT_DETAILS}`,
    async run(ctx) {
      const id = idArg(ctx, 0, 'the machine id', 'mch');
      noMoreArgs(ctx, 1);
      waitTimeout(ctx);
      const { c, api } = workspaceClient(ctx);
      if (action === 'delete') await confirm(ctx, `Delete machine ${id}`, 'Its server and snapshot at the provider are deleted.');
      const machine = await send(c.server, api.GET('/v1/machines/{id}', { params: { path: { id } } }));
      const header = { 'if-match': machine.etag };
      const opId =
        action === 'delete'
          ? (await send(c.server, api.DELETE('/v1/machines/{id}', { params: { path: { id }, header } }))).operation_id
          : action === 'resume'
            ? (await send(c.server, api.POST('/v1/machines/{id}:resume', { params: { path: { id }, header } }))).operation_id
            : (await send(c.server, api.POST('/v1/machines/{id}:suspend', { params: { path: { id }, header }, body: {} }))).operation_id;
      await followOperation(ctx, c, api, machine.id, opId, verb, done);
    },
  };
}

export const machinesDelete = machineChange('delete');
export const machinesResume = machineChange('resume');
export const machinesSuspend = machineChange('suspend');

export const machinesGet: Command = {
  name: 'machines get',
  usage: 'mch_ID',
  summary: 'one machine: its status, type, region, address and latest operation',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the machine id', 'mch');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const m = await send(c.server, api.GET('/v1/machines/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, m);
    printFields(ctx.io, [
      ['id', m.id],
      ['hostname', m.hostname],
      ['status', m.status],
      ['type', m.server_type],
      ['region', m.location],
      ['image', m.image],
      ['ipv4', m.ipv4],
      ['config', m.compute_config_id],
      ['cluster', m.cluster_id],
      ['suspension', m.suspension_id],
      ['operation', m.operation_id],
      ['created', time(m.created_at)],
    ]);
  },
};

export const machinesCreate: Command = {
  name: 'machines create',
  usage: '--config cc_ID --type cx22 [--hostname NAME] [--cluster cl_ID] [--timeout 10m] [--no-wait]',
  summary: 'create a machine of a compute config (`wsp regions list` lists the types each region offers); waits until it runs',
  flags: ['config', 'type', 'hostname', 'cluster', 'timeout'],
  booleans: ['no-wait'],
  details: WAIT_DETAILS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    waitTimeout(ctx);
    const body = {
      compute_config_id: stringFlag(ctx.args, 'config', true),
      server_type: stringFlag(ctx.args, 'type', true),
      ...(typeof ctx.args.flags.hostname === 'string' ? { hostname: ctx.args.flags.hostname } : {}),
      ...(typeof ctx.args.flags.cluster === 'string' ? { cluster_id: ctx.args.flags.cluster } : {}),
    };
    const { c, api } = workspaceClient(ctx);
    const m = await send(c.server, api.POST('/v1/machines', { body }));
    await followOperation(ctx, c, api, m.id, m.operation_id, 'Creating', 'Created');
  },
};

export const configsList: Command = {
  name: 'compute configs list',
  usage: listUsage(100),
  summary: "the workspace's compute configs: where and from what machines are made",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/compute/configs', { params: { query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (x) => x.id],
        ['name', (x) => x.name],
        ['region', (x) => x.region],
        ['image', (x) => x.image],
        ['types', (x) => x.machine_type_filter],
        ['account', (x) => (x.secret_id ? `own (${x.secret_id})` : 'platform')],
      ],
      'No compute configs.',
    );
  },
};

export const configsCreate: Command = {
  name: 'compute configs create',
  usage: '--name NAME --region fsn1 --image debian-12 [--types cx*] [--secret sec_ID]',
  summary: 'make a compute config (the catalog lists regions, images and types)',
  flags: ['name', 'region', 'image', 'types', 'secret'],
  details: "--types is a glob over server types (cx*, cpx?1); --secret names a secret holding your own provider token (else the platform's account).",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const body = {
      name: stringFlag(ctx.args, 'name', true),
      provider: 'hetzner' as const,
      region: stringFlag(ctx.args, 'region', true),
      image: stringFlag(ctx.args, 'image', true),
      ...(typeof ctx.args.flags.types === 'string' ? { machine_type_filter: ctx.args.flags.types } : {}),
      ...(typeof ctx.args.flags.secret === 'string' ? { secret_id: ctx.args.flags.secret } : {}),
    };
    const { c, api } = workspaceClient(ctx);
    const made = await send(c.server, api.POST('/v1/compute/configs', { body }));
    if (ctx.json) return printJson(ctx.io, made);
    ctx.io.out.write(`Created compute config ${made.id}.\n`);
  },
};

export const configsGet: Command = {
  name: 'compute configs get',
  usage: 'cc_ID',
  summary: 'one compute config',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the compute config id', 'cc');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const x = await send(c.server, api.GET('/v1/compute/configs/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, x);
    printFields(ctx.io, [
      ['id', x.id],
      ['name', x.name],
      ['provider', x.provider],
      ['region', x.region],
      ['image', x.image],
      ['types', x.machine_type_filter],
      ['account', x.secret_id ? `own (${x.secret_id})` : 'platform'],
      ['created', time(x.created_at)],
    ]);
  },
};

export const configsDelete = deleteCommand({
  name: 'compute configs delete',
  summary: 'delete a compute config (refused while machines use it)',
  noun: 'compute config',
  prefix: 'cc',
  path: '/v1/compute/configs/{id}',
});

export const suspensionsList: Command = {
  name: 'compute suspensions list',
  usage: '',
  summary: 'suspended machines: what they cost while kept, and when they expire',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const list = await send(c.server, api.GET('/v1/compute/suspensions'));
    if (ctx.json) return printJson(ctx.io, { data: list });
    printTable(
      ctx.io,
      list,
      [
        ['id', (x) => x.id],
        ['hostname', (x) => x.hostname],
        ['type', (x) => x.server_type],
        ['region', (x) => x.location],
        ['per month', (x) => euros(x.monthly_cost_cents)],
        ['expires', (x) => time(x.expires_at)],
        ['reason', (x) => x.reason],
      ],
      'No suspended machines.',
    );
  },
};

export const suspensionsResume: Command = {
  name: 'compute suspensions resume',
  usage: 'susp_ID [--timeout 10m] [--no-wait]',
  summary: 'resume the machine of a suspension; waits until it runs',
  flags: ['timeout'],
  booleans: ['no-wait'],
  details: WAIT_DETAILS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the suspension id', 'susp');
    noMoreArgs(ctx, 1);
    waitTimeout(ctx);
    const { c, api } = workspaceClient(ctx);
    const m = await send(c.server, api.POST('/v1/compute/suspensions/{id}:resume', { params: { path: { id } } }));
    await followOperation(ctx, c, api, m.id, m.operation_id, 'Resuming', 'Resumed');
  },
};

export const COMPUTE_COMMANDS = [
  computeCatalog,
  configsList,
  configsGet,
  configsCreate,
  configsDelete,
  suspensionsList,
  suspensionsResume,
  machinesList,
  machinesGet,
  machinesCreate,
  machinesSuspend,
  machinesResume,
  machinesDelete,
];
