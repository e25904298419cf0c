import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition } from '../jobs/runner.js';
import { purgeWindows } from '../db/window-counter.js';
import { nowSeconds } from '../shared/clock.js';
import { SIGN_IN_WINDOW_SECONDS } from './sign-in-limits.js';
import { PURGE_SIGN_IN_WINDOWS } from './job-kinds.js';
import { oidcLoginStore } from './oidc-store.js';

export function accountsJobs({ db, clock }: ServiceDeps): JobDefinition[] {
  // Single sign-ons abandoned at the provider go too: their rows are read through an index on expiry.
  const run = async () => ({
    sign_in_windows: await purgeWindows(db, 'sign_in_limits', nowSeconds(clock) - SIGN_IN_WINDOW_SECONDS),
    oidc_logins: await oidcLoginStore.purgeExpired(db, nowSeconds(clock)),
  });
  return [{ kind: PURGE_SIGN_IN_WINDOWS, run, everySeconds: 3600 }];
}
