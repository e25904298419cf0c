import type { Config } from '../../config.js';
import type { Clock } from '../../shared/clock.js';
import { HetznerClient } from './hetzner-client.js';
import { SimulatedProvider } from './simulated.js';
import type { ComputeProvider, ProviderAccounts } from './types.js';

export type { ProviderAccounts } from './types.js';

const MAX_CLIENTS = 1000;

/**
 * The provider for each account: the platform's (`WSP_PROVIDER_TOKEN`) or a workspace's
 * own token. One client per token, so what the provider said about its rate limit is kept
 * for the next request with that token.
 */
export function createProviderAccounts(config: Config['provider'], clock: Clock): ProviderAccounts {
  const { url } = config;
  if (!url) {
    const simulated = SimulatedProvider.projects();
    return { providerId: config.id, forToken: simulated };
  }
  // loadConfig refuses this too; a config made in code must not send an empty bearer either.
  if (!config.token) throw new Error("a provider URL needs the platform's provider token (WSP_PROVIDER_TOKEN)");
  const platformToken = config.token;
  const clients = new Map<string, ComputeProvider>();
  return {
    providerId: config.id,
    forToken(token) {
      const key = token ?? platformToken;
      let client = clients.get(key);
      if (!client) {
        // Rotated-away tokens must not pile up: the oldest client is dropped past the bound.
        if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
        clients.set(key, (client = new HetznerClient({ baseUrl: url, token: key, timeoutMs: config.timeoutMs, clock })));
      }
      return client;
    },
  };
}

/** What compute needs of the secrets area (docs/spec-gaps.md, "Compute"'s bring-your-own machine account). */
export interface SecretLookup {
  exists(workspaceId: string, secretId: string): Promise<boolean>;
  newestEnabledPayload(workspaceId: string, secretId: string): Promise<Buffer | null>;
}

/**
 * The provider a config's machines use: the workspace's own account when the config names
 * a secret (its newest enabled version is the token), else the platform's. Null when the
 * secret has no enabled version (or is gone): such a config cannot act.
 */
export async function providerForConfig(accounts: ProviderAccounts, secrets: SecretLookup, config: { workspace_id: string; secret_id: string | null }): Promise<ComputeProvider | null> {
  if (config.secret_id === null) return accounts.forToken(null);
  const payload = await secrets.newestEnabledPayload(config.workspace_id, config.secret_id);
  const token = payload?.toString('utf8').trim();
  payload?.fill(0);
  return token ? accounts.forToken(token) : null;
}
