import { ApiError, ErrorCodes } from '../../shared/errors.js';
import { PermanentJobError } from '../../jobs/failure.js';
import { ProviderError } from './types.js';

/**
 * A provider failure during a request: the platform's provider being down, slow or rate
 * limiting is no fault of the caller, so it is a 503 with Retry-After, never a 500.
 */
export function toRequestError(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  const retryAfter = err.retryAfterSeconds ?? (err.failure === 'unavailable' ? 5 : 30);
  return new ApiError('PROVIDER_UNAVAILABLE', {
    message: `The compute provider could not answer: ${err.message}`,
    headers: { 'retry-after': String(Math.max(1, retryAfter)) },
  });
}

export async function duringRequest<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toRequestError(err);
  }
}

/**
 * A provider failure during a job: the job is retried when the provider is at fault and
 * fails for good (recording the provider's reason on the operation) when the request is.
 */
export function toJobError(err: unknown): unknown {
  if (err instanceof ProviderError && err.failure === 'rejected') {
    return new PermanentJobError(`The compute provider refused the request: ${err.message}`, ErrorCodes.PROVIDER_REJECTED.code);
  }
  return err;
}
