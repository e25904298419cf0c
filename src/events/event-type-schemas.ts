/**
 * Every event type (docs/spec-gaps.md, "Events and the audit log"), `<resource>.<verb>`, with what it records. The resource
 * type of an event is the part before the dot. The OpenAPI document lists these (the audit
 * log's `type` filter), and webhooks subscribe to them.
 */
export const EVENT_TYPES = {
  'workspace.created': 'A workspace was created (POST /v1/workspaces).',
  'workspace.updated': 'A workspace was renamed.',
  'workspace.set_up': 'The platform was set up: its first owner and workspace (POST /v1/setup).',
  'member.updated': "A member's role was changed.",
  'member.removed': 'A member was removed from the workspace.',
  'invitation.created': 'An invitation was sent.',
  'invitation.revoked': 'An invitation was withdrawn.',
  'invitation.accepted': 'An invitation was accepted: its user became a member.',
  'api_token.created': 'A workspace API token was made (its plaintext is never recorded).',
  'api_token.revoked': 'A workspace API token was revoked.',
  'session.created': 'A user signed in (password or single sign-on).',
  'session.failed': 'A sign-in failed (wrong password, unknown email, too many attempts).',
  'session.revoked': 'A session was ended (signed out, or ended from another session).',
  'user.email_verified': 'A user proved they control their address: signed in by single sign-on with it, while signed in to the account (or an operator vouched for it).',
  'user.email_released': 'An address nobody had proven was taken from an account: its proven owner signed in by single sign-on (or an operator freed it).',
  'device_authorization.approved': 'A user approved a device sign-in (the CLI).',
  'device_authorization.denied': 'A user denied a device sign-in.',
  'notification.read': 'A notification was marked read.',
  'secret.created': 'A secret was created.',
  'secret.deleted': 'A secret and all its versions were deleted.',
  'secret_version.created': 'A secret version was added (its payload is never recorded).',
  'secret_version.enabled': 'A secret version was enabled.',
  'secret_version.disabled': 'A secret version was disabled.',
  'secret_version.destroyed': 'A secret version was destroyed: its payload is gone.',
  'secret_version.accessed': "A secret version's payload was read (:access).",
  'compute_config.created': 'A compute config was created.',
  'compute_config.deleted': 'A compute config was deleted.',
  'cluster.created': 'A cluster was created.',
  'cluster.updated': "A cluster's name or description changed.",
  'cluster.deleted': 'An empty cluster was deleted.',
  'machine.created': 'A machine was requested (it is made by an operation).',
  'machine.deleted': 'A machine was given up for deletion (its servers and snapshots are deleted by an operation).',
  'machine.suspended': 'A machine suspension was started.',
  'machine.resumed': 'A suspended machine was resumed.',
  'package.created': 'A package was created.',
  'package.deleted': 'A package was deleted, with its versions (no install used it).',
  'package_version.created': 'A package version was uploaded.',
  'install.created': 'An install was created (its first render follows).',
  'install.updated': "An install's version or values changed (a render follows).",
  'install.restored': 'An install was restored to an earlier render.',
  'install.deleted': 'An install was deleted: it reads 404 and its renders under way were canceled; its repository is removed by an operation.',
  'repository_change_request.opened': 'A render of an install whose delivery is change_request opened a change request (its tree waits on refs/changes/<number>).',
  'repository_change_request.approved': 'A member approved a change request.',
  'repository_change_request.merged': "A change request was merged: the install's main moved to its head and its render succeeded.",
  'repository_change_request.closed': 'A change request was closed without merging: its render was canceled.',
  'repository_change_request.superseded': 'A newer render of the install superseded an open change request.',
  'repository_change_request.reopened': 'A closed change request was opened again: its render awaits a merge again.',
  'repository_change_request.updated': "A change request's title or description changed.",
  'snippet.created': 'A snippet was created.',
  'snippet.updated': 'A snippet was changed.',
  'snippet.deleted': 'A snippet was deleted.',
  'snippet.archived': 'A snippet was archived.',
  'snippet.unarchived': 'A snippet was unarchived.',
  'dashboard.created': 'A dashboard was created.',
  'dashboard.updated': 'A dashboard was changed.',
  'dashboard.deleted': 'A dashboard was deleted.',
  'dashboard.reset': 'A dashboard was reset to its latest snippet content.',
  'dashboard.restored': 'A dashboard was restored to an earlier revision.',
  'webhook.created': 'A webhook endpoint was added (its secret is never recorded).',
  'webhook.updated': "A webhook endpoint's URL, event types, description or state changed.",
  'webhook.deleted': 'A webhook endpoint was deleted, with its deliveries.',
  'webhook.tested': 'A test event was sent to a webhook endpoint (POST /v1/webhooks/{id}:test).',
  'webhook.disabled': 'A webhook endpoint was disabled after a day of failed deliveries (by the platform).',
  'webhook_delivery.retried': 'A delivery was sent again by hand.',
} as const satisfies Record<string, string>;

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/**
 * The types recorded with no workspace: a person's own sign-ins, sessions, device approvals and
 * address. They appear in that person's security log (GET /v1/me/events), never in a
 * workspace's audit log, whose filter therefore does not offer them.
 */
export const ACCOUNT_EVENT_TYPES = [
  'session.created',
  'session.failed',
  'session.revoked',
  'user.email_verified',
  'user.email_released',
  'device_authorization.approved',
  'device_authorization.denied',
] as const satisfies readonly EventType[];

export const resourceTypeOf = (type: EventType): string => type.slice(0, type.indexOf('.'));
