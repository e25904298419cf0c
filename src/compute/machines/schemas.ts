import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens. */
const HOSTNAME_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';

export const CreateMachineBody = Type.Object(
  {
    compute_config_id: Type.String({ minLength: 1, maxLength: 64, description: 'A compute config of the workspace, `cc_<id>` or bare' }),
    server_type: Type.String({ minLength: 1, maxLength: 64, description: "A provider server type matching the config's machine_type_filter and offered in its region" }),
    hostname: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        ...patterned(HOSTNAME_PATTERN, 'a host name such as web-1 or web-1.example.com: labels of letters, digits and inner hyphens (1-63 characters each) joined by dots', 'web-1'),
        description: 'RFC 1123 host name; default `mch-<id>`',
      }),
    ),
    cluster_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'A cluster of the workspace (404, path `["body","cluster_id"]`) whose region is the compute config\'s (422 otherwise); default: the workspace\'s default cluster, made on first use, which takes any region',
      }),
    ),
  },
  { title: 'CreateMachineBody', additionalProperties: false },
);
export type CreateMachineBody = Static<typeof CreateMachineBody>;

export const MACHINE_STATUSES = ['creating', 'running', 'suspending', 'suspended', 'resuming', 'deleting', 'failed', 'expired'] as const;

export const Machine = Type.Object(
  {
    id: Type.String({ description: '`mch_<id>`' }),
    workspace_id: Type.String(),
    compute_config_id: Type.String(),
    cluster_id: Type.String(),
    provider: Type.String(),
    hostname: Type.String(),
    server_type: Type.String(),
    location: Type.String({ description: "The provider location (the config's region)" }),
    image: Type.String(),
    status: Type.Unsafe<(typeof MACHINE_STATUSES)[number]>({
      type: 'string',
      enum: [...MACHINE_STATUSES],
      description:
        'creating → running → suspending → suspended → resuming → running; failed when creation failed; expired when its suspension ran out; deleting from running, suspended, failed or expired until the provider confirms its server and snapshot are gone (then the machine is 404)',
    }),
    provider_server_id: Type.Union([Type.Integer(), Type.Null()], { description: "The provider's server id; null while it has no server" }),
    ipv4: Type.Union([Type.String(), Type.Null()]),
    suspension_id: Type.Union([Type.String(), Type.Null()], { description: 'The suspension holding its snapshot while suspended' }),
    operation_id: Type.Union([Type.String(), Type.Null()], { description: 'The operation of its latest asynchronous change (create, suspend, resume, delete)' }),
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Machine', additionalProperties: false },
);

export const MachineList = ListEnvelope(Machine);

export { OperationAccepted } from '../../operations/schemas.js';

export const ListMachinesQuery = PageQuery(100, 50, {
  cluster_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the machines of this cluster, `cl_<id>` or bare' })),
});

export const MachineParams = Type.Object({ id: PathId(64, 'Machine id, `mch_<id>` or bare') });

export const SuspendMachineBody = Type.Object(
  {
    reason: Type.Optional(Type.Unsafe<'manual'>({ type: 'string', enum: ['manual'], description: 'Only `manual` through the API; `downgrade` is for suspensions the platform makes' })),
  },
  { title: 'SuspendMachineBody', additionalProperties: false },
);
