import type { App } from '../../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { CreateMachineBody, ListMachinesQuery, Machine, MachineList, MachineParams, OperationAccepted, SuspendMachineBody } from './schemas.js';
import type { MachineService } from './service.js';
import { guarded } from '../../auth/roles.js';

export function machineRoutes(app: App, machines: MachineService): void {
  app.post(
    '/machines',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'machine.created' },
      schema: {
        operationId: 'createMachine',
        tags: ['compute'],
        summary: 'Create a machine from a compute config',
        description:
          'Answers 201 with the machine in status `creating` and the `operation_id` that completes when the provider\'s server runs. `server_type` must match the config\'s `machine_type_filter` and be offered in its region (422 naming the types that can be used, before anything reaches the provider). `cluster_id` must name a cluster of the workspace (404) whose region is the config\'s (422, path `["body","cluster_id"]`); without it the machine joins the default cluster. A config whose secret has no enabled version cannot create machines (409, 7403). 503 with Retry-After when the provider cannot answer.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateMachineBody,
        response: { 201: Machine, ...errorResponses(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const machine = await machines.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(machine.etag)).send(machine);
    },
  );

  app.get(
    '/machines',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'listMachines',
        tags: ['compute'],
        summary: "The workspace's machines, newest first",
        description: '`cluster_id` lists only the machines of that cluster.',
        headers: requestHeaders(),
        querystring: ListMachinesQuery,
        response: { 200: MachineList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => machines.list(workspaceCtx(request), request.query.limit, request.query.cursor, request.query.cluster_id),
  );

  app.get(
    '/machines/:id',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'getMachine',
        tags: ['compute'],
        summary: 'A machine',
        headers: requestHeaders(),
        params: MachineParams,
        response: { 200: Machine, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const machine = await machines.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(machine.etag));
      return machine;
    },
  );

  app.post(
    '/machines/:id(^[^:]+)::suspend',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'machine.suspended' },
      // The body is optional: none at all means `{}`.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        operationId: 'suspendMachine',
        tags: ['compute'],
        summary: 'Suspend a running machine (If-Match): snapshot it, then delete its server',
        description:
          'Answers 200 with the machine in status `suspending` and its `operation_id`. When the operation is done the machine is `suspended` and listed under GET /v1/compute/suspensions. If the job fails part-way it stays `suspending` until the provider confirms what is left: then it is back to `running` with the snapshot removed (its server still there), or `suspended` after all (the server already deleted, the snapshot kept). Body optional: `{reason: "manual"}`.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: MachineParams,
        body: SuspendMachineBody,
        response: { 200: Machine, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const machine = await machines.suspend(workspaceCtx(request), request.params.id, request.headers['if-match'], request.body.reason ?? 'manual');
      reply.header('etag', quoteEtag(machine.etag));
      return machine;
    },
  );

  app.post(
    '/machines/:id(^[^:]+)::resume',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'machine.resumed' },
      schema: {
        operationId: 'resumeMachine',
        tags: ['compute'],
        summary: 'Resume a suspended machine: recreate its server from the snapshot',
        description:
          "The same as `POST /v1/compute/suspensions/{id}:resume` with the machine's `suspension_id`. If-Match is optional (checked when sent). Answers 200 with the machine in status `resuming` and its `operation_id`. A machine that is not suspended is 409 (7409) with `metadata.status`.",
        headers: requestHeaders({ ifMatch: 'optional', idempotencyKey: 'optional' }),
        params: MachineParams,
        response: { 200: Machine, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const machine = await machines.resume(workspaceCtx(request), request.params.id, request.headers['if-match']);
      reply.header('etag', quoteEtag(machine.etag));
      return machine;
    },
  );

  app.delete(
    '/machines/:id',
    {
      config: { scope: 'workspace', ...guarded('machines.delete'), tokenScope: 'compute:write', event: 'machine.deleted' },
      schema: {
        operationId: 'deleteMachine',
        tags: ['compute'],
        summary: 'Delete a machine (If-Match): its server and any snapshot at the provider, then the machine',
        description:
          'Answers 202 with the `operation_id` of the deletion; the machine reads `deleting` until the provider confirms that its server and snapshot are gone, then 404, and its suspension is no longer listed (at once). A provider outage only delays the deletion. Running, suspended, failed and expired machines can be deleted; one that an operation is changing (creating, suspending, resuming, deleting) is 409 (7408) with `metadata.status` and `metadata.operation_id`.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: MachineParams,
        response: { 202: OperationAccepted, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.code(202).send(await machines.delete(workspaceCtx(request), request.params.id, request.headers['if-match'])),
  );
}
