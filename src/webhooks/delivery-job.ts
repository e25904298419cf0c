import type { ServiceDeps } from '../service-deps.js';
import type { Config } from '../config.js';
import type { JobDefinition, JobPool } from '../jobs/runner.js';
import { RetryLaterError } from '../jobs/failure.js';
import { nowSeconds } from '../shared/clock.js';
import { newEtag } from '../shared/etag.js';
import { keyringFromConfig } from '../secrets/master-key.js';
import { identity } from '../identity/service.js';
import { notify } from '../notifications/service.js';
import { deliver } from './sender.js';
import { openSecret } from './signing-secret.js';
import { webhookStore } from './store.js';
import { WEBHOOK_DELIVER, type DeliverJob } from './job-kinds.js';
import { afterAttempt, gate, PROBE_SECONDS } from './circuit.js';

/** docs/spec-gaps.md, "Webhooks": the waits before each retry, after the first attempt fails (WSP_WEBHOOK_RETRY_DELAYS_SECONDS changes them). */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];
/** An endpoint whose deliveries have failed this long, without a success between, is disabled. */
export const DISABLE_AFTER_SECONDS = 86_400;
/**
 * A delivery keeps the records of its newest attempts only: the schedule makes 8, but retries by
 * hand have no end (docs/spec-gaps.md, "Webhooks").
 */
export const ATTEMPTS_KEPT = 100;

/**
 * Deliveries run in slots of their own in each process (WSP_WEBHOOK_DELIVERY_CONCURRENCY), never
 * in those of renders, machine jobs and periodic work, and one workspace's deliveries hold at most
 * its share of them (WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE): a workspace whose receivers hang waits
 * on itself, while the deliveries of others still go out. A delivery's job carries its workspace
 * as its group.
 */
export function webhookDeliveryPool(settings: Config['webhookDeliveries']): JobPool {
  return { name: 'webhook-deliveries', kinds: [WEBHOOK_DELIVER], concurrency: settings.concurrency, perGroup: settings.perWorkspace };
}

/**
 * Sends a delivery once per job. The job table gives each job to one worker of one instance at
 * a time; a worker that dies mid-attempt loses its lease and another sends again (at least
 * once). A 2xx is recorded once, conditionally on the attempts read before sending, so a
 * delivery is never recorded twice; a failure queues the next attempt at its backoff. Each
 * request sent leaves its record (what was sent, what came back) in that same transaction.
 */
export function webhookJobs(deps: ServiceDeps): JobDefinition[] {
  const { db, clock, jobs, events, config, log, engine } = deps;
  const keyring = keyringFromConfig(config);

  async function run(p: DeliverJob) {
    const d = await webhookStore.deliveryWithEndpoint(db, p.delivery_id);
    if (!d || d.state !== 'pending' || d.attempts !== p.attempt) return { skipped: true };
    const now = nowSeconds(clock);
    if (d.webhook_state !== 'enabled') {
      await webhookStore.updateDelivery(db, d.id, { state: 'failed', next_attempt_at: null, last_error: 'the endpoint is disabled', updated_at: now });
      return { skipped: true };
    }
    await passCircuit(d, now);
    // The signature's timestamp is the wall clock's, whatever clock schedules the work: receivers
    // compare it with theirs to refuse replays (Standard Webhooks allows five minutes).
    const sentAt = Math.floor(Date.now() / 1000);
    const startedAt = nowSeconds(clock);
    const outcome = await deliver(d.url, { id: d.event_id, timestamp: sentAt, body: d.body, secret: openSecret(keyring, d.webhook_id, d) }, config.webhooks);
    const at = nowSeconds(clock);
    const made = d.attempts + 1;
    await db.transaction().execute(async (trx) => {
      // The endpoint's row is locked before its delivery's, the order of DELETE /v1/webhooks/{id}
      // (the endpoint, then its deliveries by the cascade): in the other order the two deadlocked
      // on PostgreSQL and the DELETE answered 500 (found by the soak, test/faults/soak.test.ts).
      // An endpoint deleted meanwhile took its delivery with it: nothing to record.
      const endpoint = await webhookStore.getLocked(trx, engine, d.workspace_id, d.webhook_id);
      if (!endpoint) return;
      // Every request sent is recorded, also one whose outcome a racing sender recorded first
      // (a retry by hand beside a scheduled attempt): it reached the receiver all the same.
      await webhookStore.insertAttempt(
        trx,
        {
          delivery_id: d.id,
          started_at: startedAt,
          duration_ms: outcome.durationMs,
          url: d.url,
          request_headers: JSON.stringify(outcome.requestHeaders),
          response_status: outcome.status,
          response_headers: outcome.response ? JSON.stringify(outcome.response.headers) : null,
          response_headers_truncated: outcome.response?.headersTruncated ? 1 : 0,
          response_body: outcome.response?.body ?? null,
          response_body_truncated: outcome.response?.bodyTruncated ? 1 : 0,
          error: outcome.error,
        },
        ATTEMPTS_KEPT,
      );
      const circuit = afterAttempt(endpoint, outcome, at);
      // What GET /v1/webhooks/{id} shows of the circuit changed: so does its etag.
      if (circuit) await webhookStore.update(trx, d.webhook_id, { ...circuit, ...(circuit.circuit_open_until !== endpoint.circuit_open_until ? { etag: newEtag() } : {}) });
      if (circuit?.circuit_open_until != null && endpoint.circuit_open_until === null)
        log.warn({ webhookId: d.webhook_id, failures: circuit.circuit_failures, openUntil: circuit.circuit_open_until }, "webhook endpoint's circuit opened: its deliveries wait");
      const last = { last_attempt_at: at, last_status: outcome.status, last_error: outcome.error, updated_at: at };
      if (outcome.ok) {
        if (!(await webhookStore.recordAttempt(trx, d.id, d.attempts, { ...last, state: 'succeeded', next_attempt_at: null }))) return;
        if (d.failing_since !== null) await webhookStore.update(trx, d.webhook_id, { failing_since: null });
        return;
      }
      const delay = config.webhooks.retryDelaysSeconds[made - 1];
      const next = delay === undefined ? null : at + delay;
      if (!(await webhookStore.recordAttempt(trx, d.id, d.attempts, { ...last, state: next === null ? 'failed' : 'pending', next_attempt_at: next }))) return;
      if (next !== null)
        await jobs.enqueue(trx, { kind: WEBHOOK_DELIVER, payload: { delivery_id: d.id, attempt: made } satisfies DeliverJob, runAt: next * 1000, dedupeKey: `${d.id}:${made}`, group: d.workspace_id });
      const failingSince = d.failing_since ?? at;
      if (d.failing_since === null) await webhookStore.update(trx, d.webhook_id, { failing_since: at });
      if (at - failingSince >= DISABLE_AFTER_SECONDS) await disable(trx, d, at);
    });
    return { status: outcome.status, ok: outcome.ok };
  }

  /**
   * An endpoint whose circuit is open sends nothing: the delivery waits, its job requeued for when
   * the circuit half-opens (a RetryLaterError counts no attempt, the delivery's own attempts are
   * untouched), and holds no slot meanwhile. Once it half-opens, the one delivery that takes the
   * probe goes on; the others wait for the probe's outcome.
   */
  async function passCircuit(d: { id: string; webhook_id: string; attempts: number; circuit_failures: number; circuit_open_until: number | null }, now: number): Promise<void> {
    const g = gate(d, now);
    if (g.kind === 'send') return;
    if (g.kind === 'probe' && (await webhookStore.takeProbe(db, d.webhook_id, g.seen, now + PROBE_SECONDS, newEtag()))) return;
    const until = g.kind === 'wait' ? g.until : now + PROBE_SECONDS;
    await webhookStore.deferDelivery(db, d.id, d.attempts, until, now);
    throw new RetryLaterError(`the endpoint's circuit is open until ${until}`, until * 1000);
  }

  /** After a day of failures: the endpoint stops, what waits for it fails, its owners and admins are told. */
  async function disable(trx: typeof db, d: { webhook_id: string; workspace_id: string; url: string }, now: number) {
    const reason = `disabled after ${DISABLE_AFTER_SECONDS / 3600} hours of failed deliveries`;
    await webhookStore.update(trx, d.webhook_id, { state: 'disabled', disabled_reason: reason, etag: newEtag(), updated_at: now });
    await webhookStore.failPending(trx, d.webhook_id, 'the endpoint was disabled', now);
    const system = { workspaceId: d.workspace_id, actor: { kind: 'system' as const, id: null }, credentialId: null };
    await events.record(trx, system, 'webhook.disabled', d.webhook_id, { url: d.url, reason });
    await notify(trx, clock, {
      userIds: await identity.usersWithRoles(trx, d.workspace_id, ['owner', 'admin']),
      type: 'webhook_disabled',
      resource_type: 'webhook',
      resource_id: d.webhook_id,
      title: `Webhook to ${new URL(d.url).host} disabled`,
      body: `Deliveries to ${d.url} failed for a day, so the endpoint was disabled. Fix the receiver, then enable it again (PATCH /v1/webhooks/${d.webhook_id} {"enabled": true}) and retry the failed deliveries.`,
      severity: 'warning',
      context: { workspace_id: d.workspace_id, webhook_id: d.webhook_id },
      dedupeKey: `webhook_disabled:${d.webhook_id}:${now}`,
    });
    log.warn({ webhookId: d.webhook_id }, 'webhook disabled after a day of failed deliveries');
  }

  return [{ kind: WEBHOOK_DELIVER, run: (job) => run(job.payload as DeliverJob) }];
}
