import { DELIVERY_TIMEOUT_MS, type AttemptOutcome } from './sender.js';

/**
 * An endpoint's circuit breaker: a receiver that never answers would hold a delivery slot for the
 * whole timeout (10 s) on every attempt, so after CIRCUIT_FAILURES timeouts or connection
 * failures in a row its deliveries stop being sent for a while. While the circuit is open they
 * wait, requeued for when it half-opens, their attempts not counted (src/webhooks/delivery-job.ts);
 * then one delivery goes through as a probe: any answer closes the circuit (the receiver is
 * there; what it answered is the retry schedule's business), another timeout opens it again for
 * twice as long. Its state is two columns of the endpoint (`circuit_failures`,
 * `circuit_open_until`); the circuit is open exactly while `circuit_open_until` is set.
 */
export const CIRCUIT_FAILURES = 3;
/** How long the circuit stays open when it opens; each further failure in a row doubles it, up to CIRCUIT_OPEN_MAX_SECONDS. */
export const CIRCUIT_OPEN_SECONDS = 60;
export const CIRCUIT_OPEN_MAX_SECONDS = 3600;
/** A probe's own time: the other deliveries wait for its outcome, or for this long if its worker died. */
export const PROBE_SECONDS = DELIVERY_TIMEOUT_MS / 1000 + 5;

export interface Circuit {
  circuit_failures: number;
  circuit_open_until: number | null;
}

/** How long the circuit opens for after `failures` failures in a row (at least CIRCUIT_FAILURES). */
export function openSeconds(failures: number): number {
  return Math.min(CIRCUIT_OPEN_MAX_SECONDS, CIRCUIT_OPEN_SECONDS * 2 ** Math.max(0, failures - CIRCUIT_FAILURES));
}

/** An attempt that held its slot until the receiver was given up on, or never reached it: no HTTP answer at all. */
export const unanswered = (outcome: AttemptOutcome): boolean => !outcome.ok && outcome.status === null;

/**
 * Before sending, with the endpoint as read: `send`, `probe` (the circuit half-opens: the caller
 * must win it with `webhookStore.takeProbe`, compared with `seen`), or `wait` until then.
 */
export function gate(c: Circuit, now: number): { kind: 'send' } | { kind: 'probe'; seen: number } | { kind: 'wait'; until: number } {
  const until = c.circuit_open_until === null ? null : Number(c.circuit_open_until);
  if (until === null) return { kind: 'send' };
  if (until > now) return { kind: 'wait', until };
  return { kind: 'probe', seen: until };
}

/** What an attempt's outcome makes of the circuit, from the endpoint as locked for recording it; null when nothing changes. */
export function afterAttempt(c: Circuit, outcome: AttemptOutcome, at: number): Circuit | null {
  if (!unanswered(outcome)) return c.circuit_failures === 0 && c.circuit_open_until === null ? null : { circuit_failures: 0, circuit_open_until: null };
  const failures = c.circuit_failures + 1;
  return { circuit_failures: failures, circuit_open_until: failures >= CIRCUIT_FAILURES ? at + openSeconds(failures) : null };
}
