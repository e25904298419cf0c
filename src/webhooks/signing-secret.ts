import { randomBytes } from 'node:crypto';
import { open, seal } from '../secrets/crypto.js';
import type { Keyring } from '../secrets/master-key.js';

/** `whsec_` + base64 of 24 random bytes (docs/spec-gaps.md, "Webhooks"), as the Standard Webhooks libraries read it. */
export const newSigningSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The secret sealed under the current master key, bound to its webhook's id. */
export function sealSecret(keyring: Keyring, webhookId: string, secret: string): { secret_sealed: string; secret_key_id: string } {
  const master = keyring.current;
  return { secret_sealed: seal(master.key, Buffer.from(secret), `webhook:${webhookId}`), secret_key_id: master.id };
}

export function openSecret(keyring: Keyring, webhookId: string, row: { secret_sealed: string; secret_key_id: string }): string {
  const master = keyring.find(row.secret_key_id);
  if (!master) throw new Error(`the master key ${row.secret_key_id} that sealed webhook ${webhookId}'s secret is not available`);
  return open(master.key, row.secret_sealed, `webhook:${webhookId}`).toString();
}
