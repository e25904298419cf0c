/**
 * A writer of an install's `main` found the branch's lock held by another writer (git's
 * `main.lock`, held for under a millisecond by a live one). A job retries it with backoff; a
 * request answers 503 with Retry-After (src/http/pipeline.ts), as clients retry a busy server,
 * rather than a 500 for a state that passes by itself.
 */
export class BranchBusyError extends Error {}

/** Seconds a request refused by a busy branch is told to wait: the lock is released in far less. */
export const BRANCH_BUSY_RETRY_AFTER_SECONDS = 1;
