import { createContext } from 'preact';

export interface Me {
  user: { id: string; name: string | null; email: string | null } | null;
  workspace: { id: string; name: string } | null;
  role: string | null;
}

/** The signed-in caller, for the views the router renders (they re-render when it changes). */
export const SessionContext = createContext<Me | null>(null);

/** Whether the caller administers the workspace (owner or admin): the views of §7 of the issue. */
export const isAdmin = (me: Me | null) => me?.role === 'owner' || me?.role === 'admin';
