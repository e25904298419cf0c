import type { components } from './schema.js';
import { unwrap, WspError, type Answer } from './errors.js';

export type Operation = components['schemas']['Operation'];

export interface WaitOptions {
  /** Give up after this long (default 5 minutes), with an `Error` naming the operation. */
  timeoutMs?: number;
  /** The first pause between polls (default 250 ms), doubled up to `maxIntervalMs` (default 5 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
  signal?: AbortSignal;
  /** Waiting between polls (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
}

/** What can name an operation: its id, or the 202 answer that carries `operation_id`. */
export type OperationRef = string | { operation_id: string };

type OperationGetter = (path: '/v1/operations/{id}', init: { params: { path: { id: string } }; signal?: AbortSignal }) => Promise<Answer<Operation>>;

/** An operation that ended with an error: the operation, its code and its message. */
export class OperationFailedError extends Error {
  override readonly name = 'OperationFailedError';
  readonly code: number;
  constructor(readonly operation: Operation) {
    super(`operation ${operation.id} (${operation.kind}) failed: ${operation.error?.message ?? 'no reason given'} [${operation.error?.code ?? 0}]`);
    this.code = operation.error?.code ?? 0;
  }
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls an operation until it is done, backing off between polls, and answers it when it
 * succeeded; throws `OperationFailedError` when it failed, `WspError` when the server refuses
 * the poll, and an `Error` at the timeout.
 */
export async function waitForOperation(get: OperationGetter, ref: OperationRef, opts: WaitOptions = {}): Promise<Operation> {
  const id = typeof ref === 'string' ? ref : ref.operation_id;
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  const sleep = opts.sleep ?? wait;
  let interval = opts.intervalMs ?? 250;
  for (;;) {
    const operation = await unwrap(get('/v1/operations/{id}', { params: { path: { id } }, ...(opts.signal ? { signal: opts.signal } : {}) }));
    if (operation.done) {
      if (operation.error) throw new OperationFailedError(operation);
      return operation;
    }
    if (Date.now() + interval > deadline) throw new Error(`operation ${id} is not done after ${Math.round((opts.timeoutMs ?? 300_000) / 1000)} s`);
    opts.signal?.throwIfAborted();
    await sleep(interval);
    interval = Math.min(interval * 2, opts.maxIntervalMs ?? 5000);
  }
}

export { WspError };
