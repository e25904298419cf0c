/** Hourly: the failed sign-in windows that ended, and the single sign-ons abandoned at the provider, are deleted (a key per address and email tried would pile up). */
export const PURGE_SIGN_IN_WINDOWS = 'accounts.purge_sign_in_windows';
