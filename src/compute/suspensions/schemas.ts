import { Type } from '@sinclair/typebox';
import { PathId } from '../../http/schemas.js';

/** The spec's suspension, every field; the further enum field is `reason`. */
export const Suspension = Type.Object(
  {
    id: Type.String({ description: '`susp_<id>`' }),
    workspace_id: Type.String(),
    cluster_id: Type.String(),
    server_type: Type.String({ description: 'provider server type name' }),
    location: Type.String({ description: 'provider location code' }),
    hostname: Type.String(),
    provider_suspend_data: Type.Object(
      {
        provider: Type.String(),
        snapshot_id: Type.Integer({ description: "The snapshot image's id at the provider" }),
        size_gb: Type.Number(),
      },
      { additionalProperties: false },
    ),
    monthly_cost_cents: Type.Number({ description: "What storing the snapshot costs a month, in cents (size × the provider's gross price per GB and month)" }),
    expires_at: Type.Number({ description: 'created_at + WSP_SUSPENSION_RETENTION_DAYS; the snapshot is deleted then' }),
    created_at: Type.Number(),
    reason: Type.Unsafe<'manual' | 'downgrade'>({ type: 'string', enum: ['manual', 'downgrade'] }),
  },
  { title: 'Suspension', additionalProperties: false },
);

export const SuspensionList = Type.Array(Suspension, { description: 'A bare array, not the list envelope' });

export const SuspensionParams = Type.Object({ id: PathId(64, 'Suspension id, `susp_<id>` or bare') });
