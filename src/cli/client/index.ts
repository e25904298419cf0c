import type { Command } from './command.js';
import { processIo, type Io } from './output.js';
import { login, logout, whoami } from './login.js';
import { workspaceList, workspaceQuotas, workspaceRename, workspaceUse } from './workspace.js';
import { tokensCreate, tokensList, tokensRevoke } from './tokens.js';
import { sessionsList, sessionsRevoke } from './sessions.js';
import { invitationsAccept, invitationsCreate, invitationsList, invitationsRevoke, membersList, membersRemove, membersRole, workspaceCreate } from './members.js';
import { notificationsList, notificationsRead } from './notifications.js';
import { secretCommands } from './secrets.js';
import { DASHBOARD_COMMANDS } from './dashboards.js';
import { SNIPPET_COMMANDS } from './snippets.js';
import { INSTALL_COMMANDS, renderGet } from './installs.js';
import { COMPUTE_COMMANDS } from './compute.js';
import { CLUSTER_COMMANDS } from './clusters.js';
import { PACKAGE_COMMANDS } from './packages.js';
import { operationsGet, operationsWait } from './operations.js';
import { apiCommand } from './api-command.js';
import { completionCommand } from './completion.js';
import { auditList, auditMine } from './audit.js';
import { WEBHOOK_COMMANDS } from './webhooks.js';
import { metricsList, metricsSeries } from './metrics.js';
import { rendersFiles } from './renders.js';
import { CHANGE_COMMANDS } from './changes.js';
import { authGitCredential, authSetupGit } from './git-auth.js';
import { runProgram } from './program.js';

const COMMANDS: Command[] = [
  login,
  logout,
  whoami,
  authSetupGit,
  authGitCredential,
  workspaceUse,
  workspaceList,
  workspaceQuotas,
  workspaceCreate,
  workspaceRename,
  membersList,
  membersRole,
  membersRemove,
  invitationsCreate,
  invitationsList,
  invitationsRevoke,
  invitationsAccept,
  tokensCreate,
  tokensList,
  tokensRevoke,
  sessionsList,
  sessionsRevoke,
  notificationsList,
  notificationsRead,
  ...secretCommands,
  ...DASHBOARD_COMMANDS,
  ...SNIPPET_COMMANDS,
  metricsList,
  metricsSeries,
  ...PACKAGE_COMMANDS,
  ...INSTALL_COMMANDS,
  renderGet,
  rendersFiles,
  ...CHANGE_COMMANDS,
  ...COMPUTE_COMMANDS,
  ...CLUSTER_COMMANDS,
  operationsGet,
  operationsWait,
  auditList,
  auditMine,
  ...WEBHOOK_COMMANDS,
  apiCommand,
  completionCommand(() => COMMANDS),
];

/** Every client command, as the program and the completion scripts know them. */
export const clientCommands = (): readonly Command[] => COMMANDS;

/** Runs `wsp` as a client (every command but serve, worker and admin); answers the exit code (see EXIT). */
export function runClient(argv: string[], io: Io = processIo()): Promise<number> {
  return runProgram(COMMANDS, argv, io);
}
