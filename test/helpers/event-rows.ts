import { newId } from '../../src/shared/ids.js';

/** An event row as the event log writes it, with only what the event series read set. */
export const eventRow = (workspaceId: string, type: string, createdAt: number) => ({
  id: newId('evt'),
  workspace_id: workspaceId,
  type,
  actor_kind: 'system',
  actor_id: null,
  credential_id: null,
  resource_type: type.split('.')[0]!,
  resource_id: 'x',
  request_id: null,
  ip: null,
  user_agent: null,
  created_at: createdAt,
  data: '{}',
});
