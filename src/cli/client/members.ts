import { UsageError, stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { confirm } from './confirm.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { arg, idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printFields, printJson, time } from './output.js';

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
type Role = (typeof ROLES)[number];

function role(raw: string | undefined): Role {
  if (!ROLES.includes(raw as Role)) throw new UsageError(`a role is one of ${ROLES.join(', ')}, got "${raw ?? ''}"`);
  return raw as Role;
}

export const workspaceCreate: Command = {
  name: 'workspace create',
  usage: '--name NAME',
  summary: 'make a workspace; you are its owner (then `wsp workspace use`)',
  flags: ['name'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const name = stringFlag(ctx.args, 'name', true);
    const c = requireCredentials(ctx.io.env);
    const ws = await send(c.server, apiAs({ ...c, workspace: null }).POST('/v1/workspaces', { body: { name } }));
    if (ctx.json) return printJson(ctx.io, ws);
    ctx.io.out.write(`Made workspace ${ws.name} (${ws.id}); you are its owner. Act in it with: wsp workspace use ${ws.id}\n`);
  },
};

export const membersList: Command = {
  name: 'members list',
  usage: listUsage(100),
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  summary: "the workspace's members and their roles",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);
    const members = await listed(ctx, c.server, 100, (query) => api.GET('/v1/workspaces/{id}/members', { params: { path: { id: c.workspace }, query } }));
    printListed(
      ctx,
      members,
      [
        ['user', (m) => m.user_id],
        ['email', (m) => m.email ?? ''],
        ['name', (m) => m.name ?? ''],
        ['role', (m) => m.role],
        ['joined', (m) => time(m.joined_at)],
      ],
      'No members.',
    );
  },
};

export const membersRole: Command = {
  name: 'members role',
  usage: 'usr_ID owner|admin|member|viewer',
  summary: "change a member's role (owner or admin; only an owner grants or takes owner)",
  async run(ctx) {
    const userId = idArg(ctx, 0, 'the user id', 'usr');
    const newRole = role(arg(ctx, 1, 'the role'));
    noMoreArgs(ctx, 2);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const m = await send(c.server, apiAs(c).PATCH('/v1/workspaces/{id}/members/{user_id}', { params: { path: { id: c.workspace, user_id: userId } }, body: { role: newRole } }));
    if (ctx.json) return printJson(ctx.io, m);
    ctx.io.out.write(`${m.email ?? m.user_id} is now ${m.role}.\n`);
  },
};

export const membersRemove: Command = {
  name: 'members remove',
  usage: 'usr_ID',
  summary: 'remove a member (owner or admin), or yourself: their next request here is refused',
  async run(ctx) {
    const userId = idArg(ctx, 0, 'the user id', 'usr');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    await confirm(ctx, `Remove ${userId} from workspace ${c.workspace}`, 'They lose access at their next request.');
    await send(c.server, apiAs(c).DELETE('/v1/workspaces/{id}/members/{user_id}', { params: { path: { id: c.workspace, user_id: userId } } }));
    if (ctx.json) return printJson(ctx.io, { user_id: userId, removed: true });
    ctx.io.out.write(`Removed ${userId} from ${c.workspace}.\n`);
  },
};

export const invitationsCreate: Command = {
  name: 'invitations create',
  usage: '--email EMAIL [--role member|viewer|admin|owner]',
  summary: 'invite someone (owner or admin); the link is shown once and works for 7 days',
  flags: ['email', 'role'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const email = stringFlag(ctx.args, 'email', true);
    const r = role(stringFlag(ctx.args, 'role') ?? 'member');
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const inv = await send(c.server, apiAs(c).POST('/v1/workspaces/{id}/invitations', { params: { path: { id: c.workspace } }, body: { email, role: r } }));
    if (ctx.json) return printJson(ctx.io, inv);
    printFields(ctx.io, [
      ['id', inv.id],
      ['email', inv.email],
      ['role', inv.role],
      ['expires', time(inv.expires_at)],
      ['link', inv.url],
    ]);
    ctx.io.err.write('Send the link now: it is never shown again.\n');
  },
};

export const invitationsList: Command = {
  name: 'invitations list',
  usage: listUsage(100),
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  summary: "the workspace's pending invitations (owner or admin)",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);
    const invitations = await listed(ctx, c.server, 100, (query) => api.GET('/v1/workspaces/{id}/invitations', { params: { path: { id: c.workspace }, query } }));
    printListed(
      ctx,
      invitations,
      [
        ['id', (i) => i.id],
        ['email', (i) => i.email],
        ['role', (i) => i.role],
        ['expires', (i) => time(i.expires_at)],
      ],
      'No pending invitations.',
    );
  },
};

export const invitationsRevoke: Command = {
  name: 'invitations revoke',
  usage: 'inv_ID',
  summary: 'revoke a pending invitation: its link answers 410 from now on',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the invitation id', 'inv');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    await confirm(ctx, `Revoke invitation ${id}`, 'Its link stops working.');
    await send(c.server, apiAs(c).DELETE('/v1/workspaces/{id}/invitations/{inv}', { params: { path: { id: c.workspace, inv: id } } }));
    if (ctx.json) return printJson(ctx.io, { id, revoked: true });
    ctx.io.out.write(`Revoked ${id}.\n`);
  },
};

export const invitationsAccept: Command = {
  name: 'invitations accept',
  usage: 'LINK|TOKEN',
  summary: 'join the workspace an invitation is for, as the user you are logged in as',
  details: 'Takes the link as it was sent (…/console/invite#<token>) or the token alone. Then `wsp workspace use` the workspace to act in it.',
  async run(ctx) {
    const given = arg(ctx, 0, 'the invitation link or token');
    noMoreArgs(ctx, 1);
    const token = given.includes('#') ? given.slice(given.lastIndexOf('#') + 1) : given;
    if (token === '') throw new UsageError('the link has no token after its #');
    const c = requireCredentials(ctx.io.env);
    const joined = await send(c.server, apiAs({ ...c, workspace: null }).POST('/v1/invitations:accept', { body: { token } }));
    if (ctx.json) return printJson(ctx.io, joined);
    ctx.io.out.write(`Joined ${joined.workspace_id} as ${joined.role}. Act in it with: wsp workspace use ${joined.workspace_id}\n`);
  },
};
