import type { ServiceDeps } from '../service-deps.js';
import { createSecretService } from '../secrets/service.js';
import { createProviderAccounts, type SecretLookup } from './provider/accounts.js';
import type { ProviderAccounts } from './provider/types.js';
import { catalogSource, type CatalogSource } from './catalog.js';

/** What the compute area's services and jobs are built from. */
export interface ComputeDeps extends ServiceDeps {
  /** One client per provider token: what the provider said of its rate limit holds for the next call. */
  accounts: ProviderAccounts;
  /** The secrets area's service, for bring-your-own provider accounts (docs/spec-gaps.md, "Compute"). */
  secrets: SecretLookup;
  /** What the provider offers, kept briefly: shared by this process's requests. */
  catalog: CatalogSource;
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
    const accounts = createProviderAccounts(deps.config.provider, clock);
    area = { ...deps, clock, accounts, secrets: createSecretService(deps), catalog: catalogSource(accounts, clock) };
    built.set(deps, area);
  }
  return area;
}
