import { createContext } from 'preact';
import type { DataOf } from '@workspace-platform/sdk';

/** The caller as GET /v1/me answers it: who, in which workspace, with which role. */
export type Me = DataOf<'/v1/me'>;

/** The signed-in caller, for the views the router renders (they re-render when it changes). */
export const SessionContext = createContext<Me | null>(null);

/** A guarded action of docs/spec-gaps.md, "Roles (issue 50)": what GET /v1/me's `permissions` name. */
export type Permission = NonNullable<Me['permissions']>[number];

/**
 * Whether the caller may take the action in the current workspace, as GET /v1/me says: the
 * console shows only the controls that will work (a viewer has no `write`, a member no deletes).
 */
export const can = (me: Me | null, permission: Permission) => me?.permissions?.includes(permission) ?? false;
