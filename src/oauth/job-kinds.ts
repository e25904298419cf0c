/** Hourly: device logins expired for an hour and ended guess windows are deleted. */
export const PURGE_DEVICE_LOGINS = 'oauth.purge_device_logins';
