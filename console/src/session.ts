import { createContext } from 'preact';
import type { DataOf } from '@workspace-platform/sdk';

/** The caller as GET /v1/me answers it: who, in which workspace, with which role. */
export type Me = DataOf<'/v1/me'>;

/** The signed-in caller, for the views the router renders (they re-render when it changes). */
export const SessionContext = createContext<Me | null>(null);

/** Whether the caller administers the workspace (owner or admin): the views of §7 of the issue. */
export const isAdmin = (me: Me | null) => me?.role === 'owner' || me?.role === 'admin';
