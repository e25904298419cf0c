import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition } from '../jobs/runner.js';
import { nowSeconds } from '../shared/clock.js';
import { deviceStore, guessLimitStore } from './store.js';
import { GUESS_WINDOW_SECONDS } from './guess-limiter.js';
import { PURGE_DEVICE_LOGINS } from './job-kinds.js';

/** Expired logins answer expired_token for an hour more, then are gone (invalid_grant). */
const KEEP_EXPIRED_SECONDS = 3600;

/** Device authorization's housekeeping, hourly: expired logins and ended guess windows. */
export function oauthJobs({ db, clock }: ServiceDeps): JobDefinition[] {
  const run = async () => {
    const now = nowSeconds(clock);
    const logins = await deviceStore.purgeExpiredBefore(db, now - KEEP_EXPIRED_SECONDS);
    const windows = await guessLimitStore.purgeWindowsBefore(db, now - GUESS_WINDOW_SECONDS);
    return { device_logins: logins, guess_windows: windows };
  };
  return [{ kind: PURGE_DEVICE_LOGINS, run, everySeconds: 3600 }];
}
