import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

export const CLUSTER_NAME_PATTERN = '^[a-z0-9-]{1,63}$';

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 63, ...patterned(CLUSTER_NAME_PATTERN, '1-63 characters of a-z, 0-9 and -', 'eu-prod'), description });

const Description = Type.String({ maxLength: 500, description: 'Free text, at most 500 characters' });

export const CLUSTER_STATUSES = ['empty', 'provisioning', 'ready', 'degraded'] as const;

/** Every machine status, each counted (0 when none): a client need not know which are missing. */
const count = (status: string) => Type.Integer({ minimum: 0, description: `Machines ${status}` });

export const MachineCounts = Type.Object(
  {
    creating: count('being created'),
    running: count('running'),
    suspending: count('being suspended'),
    suspended: count('suspended'),
    resuming: count('being resumed'),
    deleting: count('being deleted'),
    failed: count('whose creation failed'),
    expired: count('whose suspension ran out'),
    total: Type.Integer({ minimum: 0, description: 'All its machines' }),
  },
  { title: 'MachineCounts', additionalProperties: false, description: 'Its machines by status, read with the cluster' },
);

export const Cluster = Type.Object(
  {
    id: Type.String({ description: '`cl_<id>`' }),
    workspace_id: Type.String(),
    name: Type.String({ description: 'Unique in the workspace; the default cluster is `default`' }),
    description: Type.Union([Type.String(), Type.Null()], { description: 'null when none was given' }),
    region: Type.Union([Type.String(), Type.Null()], {
      description: "A region id (GET /v1/regions): its machines' compute configs name this region. null for the default cluster, which takes machines of any region",
    }),
    status: Type.Unsafe<(typeof CLUSTER_STATUSES)[number]>({
      type: 'string',
      enum: [...CLUSTER_STATUSES],
      description: 'Derived from its machines when read: `empty` (none), `degraded` (any `failed`), `provisioning` (any `creating`, `resuming`, `suspending` or `deleting`), else `ready`',
    }),
    machine_counts: MachineCounts,
    is_default: Type.Boolean({ description: "The workspace's default cluster: machines created without `cluster_id` join it. It cannot be deleted or renamed" }),
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Cluster', additionalProperties: false },
);
export type Cluster = Static<typeof Cluster>;

export const ClusterList = ListEnvelope(Cluster, 'Newest first');

export const CreateClusterBody = Type.Object(
  {
    name: Name("Unique in the workspace (409, 7410); `default` is the default cluster's"),
    region: Type.String({ minLength: 1, maxLength: 64, description: 'A region id of GET /v1/regions (422 naming them otherwise)' }),
    description: Type.Optional(Description),
  },
  { title: 'CreateClusterBody', additionalProperties: false },
);
export type CreateClusterBody = Static<typeof CreateClusterBody>;

export const UpdateClusterBody = Type.Object(
  {
    name: Type.Optional(Name('A new name, unique in the workspace; the default cluster keeps `default`')),
    description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'A new description; null removes it' })),
  },
  { title: 'UpdateClusterBody', additionalProperties: false },
);
export type UpdateClusterBody = Static<typeof UpdateClusterBody>;

export const ListClustersQuery = PageQuery(100, 50);

export const ClusterParams = Type.Object({ id: PathId(64, 'Cluster id, `cl_<id>` or bare') });
