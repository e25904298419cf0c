import { apiAs, allPages, send } from './api.js';
import { idArg, intFlag, noMoreArgs, type Command, type CommandContext } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printJson, printTable, time } from './output.js';
import { waitForOperation } from './operations.js';

const context = (ctx: CommandContext) => {
  const c = requireWorkspace(requireCredentials(ctx.io.env));
  return { c, api: apiAs(c) };
};

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

export const computeCatalog: Command = {
  name: 'compute catalog',
  usage: '',
  summary: "what the provider offers: regions, images, server types with prices",
  details: 'The values a compute config (region, image, machine_type_filter) and a machine (server_type) may name.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = context(ctx);
    const catalog = await send(c.server, api.GET('/v1/compute/catalog'));
    if (ctx.json) return printJson(ctx.io, catalog);
    ctx.io.out.write(`Provider: ${catalog.provider}\n\nRegions:\n`);
    printTable(ctx.io, catalog.regions, [['id', (r) => r.id], ['name', (r) => r.name]], 'None.');
    ctx.io.out.write('\nImages:\n');
    printTable(ctx.io, catalog.images, [['id', (i) => i.id], ['name', (i) => i.name]], 'None.');
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
  usage: '',
  summary: "the workspace's machines, newest first",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = context(ctx);
    const machines = await allPages(c.server, (cursor) => api.GET('/v1/machines', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
    if (ctx.json) return printJson(ctx.io, { data: machines });
    printTable(
      ctx.io,
      machines,
      [
        ['id', (m) => m.id],
        ['hostname', (m) => m.hostname],
        ['type', (m) => m.server_type],
        ['region', (m) => m.location],
        ['status', (m) => m.status],
        ['ipv4', (m) => m.ipv4],
        ['created', (m) => time(m.created_at)],
      ],
      'No machines.',
    );
  },
};

/** `delete` and `resume`: send under the machine's etag, then wait for the operation unless --no-wait. */
function machineChange(action: 'delete' | 'resume'): Command {
  const verb = action === 'delete' ? 'Deleting' : 'Resuming';
  return {
    name: `machines ${action}`,
    usage: 'mch_ID [--timeout SECONDS] [--no-wait]',
    summary:
      action === 'delete'
        ? 'delete a machine: its server and snapshot at the provider, then the machine; waits until they are gone'
        : 'resume a suspended machine from its snapshot; waits until it runs',
    flags: ['timeout'],
    booleans: ['no-wait'],
    details: `Reads the machine's etag for If-Match. Waits until the operation is done (default at most 600 s): exit 0 when it succeeded, 1 when it failed or timed out; --no-wait returns at once with the operation id.`,
    async run(ctx) {
      const id = idArg(ctx, 0, 'the machine id', 'mch');
      noMoreArgs(ctx, 1);
      const timeout = intFlag(ctx, 'timeout', 1, 86400) ?? 600;
      const { c, api } = context(ctx);
      const machine = await send(c.server, api.GET('/v1/machines/{id}', { params: { path: { id } } }));
      const header = { 'if-match': machine.etag };
      const opId =
        action === 'delete'
          ? (await send(c.server, api.DELETE('/v1/machines/{id}', { params: { path: { id }, header } }))).operation_id
          : (await send(c.server, api.POST('/v1/machines/{id}:resume', { params: { path: { id }, header } }))).operation_id;
      if (!opId) throw new CliError('the server answered without an operation', EXIT.FAILED);
      if (ctx.args.flags['no-wait'] === true) {
        if (ctx.json) return printJson(ctx.io, { machine_id: machine.id, operation_id: opId });
        ctx.io.out.write(`${verb} ${machine.id}: operation ${opId}.\n`);
        return;
      }
      const operation = await waitForOperation(ctx, c.server, api, opId, timeout, `${verb} ${machine.id} (operation ${opId})`);
      if (ctx.json) printJson(ctx.io, { machine_id: machine.id, operation });
      if (operation.error) throw new CliError(`${action} failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
      if (!ctx.json) ctx.io.out.write(action === 'delete' ? `Deleted ${machine.id}.\n` : `Resumed ${machine.id}.\n`);
    },
  };
}

export const machinesDelete = machineChange('delete');
export const machinesResume = machineChange('resume');
