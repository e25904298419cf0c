import { useContext } from 'preact/hooks';
import type { Member } from '@workspace-platform/sdk';
import { api } from './api.js';
import { useLoad } from './hooks.js';
import { SessionContext } from './session.js';

/** The workspace's members by user id, to name authors and actors; empty until loaded. */
export function useMembers() {
  const me = useContext(SessionContext);
  const ws = me?.workspace?.id ?? '';
  const load = useLoad(() => api.GET('/v1/workspaces/{id}/members', { params: { path: { id: ws }, query: { limit: 100 } } }), [ws]);
  const list = load.data?.data ?? [];
  return { list, load, byId: new Map(list.map((m) => [m.user_id, m])) };
}

/** A person's or a token's name for an id: a member's name or email, else the id itself. */
export function nameOf(members: Map<string, Member>, id: string | null | undefined): string {
  if (!id) return 'the platform';
  const m = members.get(id);
  if (m) return m.name ?? m.email ?? id;
  return id.startsWith('tok_') ? `API token ${id}` : id;
}
