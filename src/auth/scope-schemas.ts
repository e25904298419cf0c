/**
 * The scopes of docs/spec-gaps.md, "Token scopes", as data for the token schemas (the rules: ./scopes.ts).
 * `members:read` is this project's addition (issue 48): the members and pending invitations of
 * the token's workspace, which hold people's emails.
 */
export const TOKEN_SCOPES = [
  'dashboards:read',
  'dashboards:write',
  'secrets:read',
  'secrets:write',
  'secrets:access',
  'installs:read',
  'installs:write',
  'compute:read',
  'compute:write',
  'tokens:read',
  'audit:read',
  'webhooks:read',
  'webhooks:write',
  'members:read',
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
