import type { ServiceDeps } from '../deps.js';
import { createSecretService } from '../secrets/service.js';
import { createProviderAccounts, type SecretLookup } from './provider/accounts.js';
import type { ProviderAccounts } from './provider/types.js';

/** What the compute area's services and jobs are built from. */
export interface ComputeDeps extends ServiceDeps {
  /** One client per provider token: what the provider said of its rate limit holds for the next call. */
  accounts: ProviderAccounts;
  /** The secrets area's service, for bring-your-own provider accounts (CONTRACT §5). */
  secrets: SecretLookup;
}

const built = new WeakMap<ServiceDeps, ComputeDeps>();

/**
 * The compute area's dependencies for this process, made once: the routes and the jobs of one
 * process share its provider clients.
 */
export function computeDeps(deps: ServiceDeps): ComputeDeps {
  let area = built.get(deps);
  if (!area) {
    // Suspensions, expiry notices and the expiry scan run on the compute clock: the process's,
    // unless the one who started the process gave another (tests of real processes move it).
    const clock = deps.computeClock ?? deps.clock;
    area = { ...deps, clock, accounts: createProviderAccounts(deps.config.provider, clock), secrets: createSecretService(deps) };
    built.set(deps, area);
  }
  return area;
}
