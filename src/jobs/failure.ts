import { ErrorCodes } from '../shared/errors.js';
import { isDatabaseError } from '../db/database.js';
import { GitError } from '../git/run-git.js';
import { RepositoryVolumeError } from '../git/volume.js';

/** What a failed job's operation shows (`GET /v1/operations/{id}`): a documented code and words meant for its caller. */
export interface JobFailure {
  code: number;
  message: string;
}

/**
 * A failure that retrying cannot fix: the job fails at once and its operation shows this code
 * and message, which the handler writes for the caller (never an error's own text).
 */
export class PermanentJobError extends Error {
  constructor(
    message: string,
    readonly code: number = ErrorCodes.JOB_FAILED.code,
  ) {
    super(message);
  }
}

/**
 * Not a failure: the work must wait (a provider's rate limit says until when). The job is
 * queued again for `runAtMs` and the attempt is not counted.
 */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly runAtMs: number,
  ) {
    super(message);
  }
}

export type FailureKind = 'database' | 'repository' | 'internal';

/**
 * The job-error policy: an error a handler did not turn into a PermanentJobError is shown by its
 * kind only, with code 7399 (JOB_FAILED) and a fixed message. Its own text (SQL, git's stderr,
 * paths on the server) goes to the log line of the job, with the job's id, and nowhere else.
 */
const PUBLIC_MESSAGE: Record<FailureKind, string> = {
  database: 'The job failed on a database error; the server log has the details under its job id',
  repository: "The job could not read or write an install's git repository; the server log has the details under its job id",
  internal: 'The job failed on an internal error; the server log has the details under its job id',
};

export function failureKind(err: unknown): FailureKind {
  if (isDatabaseError(err)) return 'database';
  if (err instanceof GitError || err instanceof RepositoryVolumeError) return 'repository';
  return 'internal';
}

/** What the operation of a job that failed with `err` shows. */
export function publicFailure(err: unknown): JobFailure {
  if (err instanceof PermanentJobError) return { code: err.code, message: err.message };
  // Its words name no path and tell an operator what to fix.
  if (err instanceof RepositoryVolumeError) return { code: ErrorCodes.REPOSITORY_UNAVAILABLE.code, message: err.message };
  return { code: ErrorCodes.JOB_FAILED.code, message: PUBLIC_MESSAGE[failureKind(err)] };
}

/** The operation of a job given up because its worker died on every attempt. */
export function gaveUpFailure(attempts: number): JobFailure {
  return {
    code: ErrorCodes.JOB_FAILED.code,
    message: `Gave up: the worker running this job stopped (killed or out of memory) during each of its ${attempts} attempts; it is not run again`,
  };
}
