/** One attempt of one delivery (payload: DeliverJob); a failed attempt queues the next at its backoff. */
export const WEBHOOK_DELIVER = 'webhooks.deliver';

export interface DeliverJob {
  delivery_id: string;
  /** The attempts recorded when the job was queued: a job whose attempt was already made (by a retry by hand) does nothing. */
  attempt: number;
}
