/** The scopes of CONTRACT §12, as data for the token schemas (the rules: ./scopes.ts). */
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
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
