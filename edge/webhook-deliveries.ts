// The webhook delivery log as its readers use it (decisions 0210, 0211): the API's and the
// dashboard's list, a resend and a test event (both through the webhook queue, so they are
// signed and sent exactly as a job's event is), and a rotation that keeps the old secret
// signing beside the new one for PREVIOUS_SECRET_HOURS.
import { newWebhookSecret } from "../schema/accounts.ts";
import type { WebhookMessage } from "../schema/messages.ts";
import {
  PREVIOUS_SECRET_HOURS,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookQueueMessage,
} from "../schema/webhook-deliveries.ts";
import { batchIdOfEvent } from "./batches/lifecycle.ts";
import { checkWebhookUrl } from "./sources.ts";
import {
  type DeliveryRecord,
  findDelivery,
  listDeliveries,
  recordQueuedDelivery,
  rotateSigningSecret,
} from "./storage/webhooks.ts";

/** SQLite's `created_at` (ISO already) or a bare datetime, as the API's date-time. */
function isoOf(value: string): string {
  return new Date(value.includes("T") ? value : `${value.replace(" ", "T")}Z`).toISOString();
}

export function deliveryToApi(row: DeliveryRecord): WebhookDelivery {
  const attempts = JSON.parse(row.attempts) as WebhookAttempt[];
  return {
    id: row.id,
    object: "webhook_delivery",
    type: row.type,
    job_id: row.job_id,
    url: row.url,
    state: row.delivered_at ? "delivered" : row.attempts_count === 0 ? "pending" : "failing",
    last_status_code: row.last_status,
    attempts_count: row.attempts_count,
    attempts,
    body: row.body,
    body_truncated: Boolean(row.body_truncated),
    created_at: isoOf(row.created_at),
    delivered_at: row.delivered_at ? isoOf(row.delivered_at) : null,
  };
}

export async function listWebhookDeliveries(
  env: Env,
  accountId: string,
  page: { limit: number; skip: number },
) {
  const { rows, total } = await listDeliveries(env.DB, accountId, page.limit, page.skip);
  return { total, limit: page.limit, skip: page.skip, data: rows.map(deliveryToApi) };
}

export async function readWebhookDelivery(env: Env, accountId: string, id: string) {
  const row = await findDelivery(env.DB, accountId, id);
  return row ? deliveryToApi(row) : null;
}

/**
 * Queues a `webhook.test` event to `url` (checked as a job's webhook_url is; an ApiError when
 * refused) and logs it as pending; the consumer signs, sends and records it. Its event id.
 */
export async function sendTestEvent(env: Env, accountId: string, url: string): Promise<string> {
  checkWebhookUrl(url, env);
  const id = `msg_test_${crypto.randomUUID()}`;
  await recordQueuedDelivery(env.DB, { id, accountId, type: "webhook.test", jobId: null, url });
  await env.WEBHOOKS_QUEUE.send({
    event_id: id,
    type: "webhook.test",
    account_id: accountId,
    url,
  } satisfies WebhookMessage);
  return id;
}

/**
 * One more attempt of a logged delivery, with the same webhook-id (a receiver that already
 * has the event can drop it by that id). False when the account has no such delivery.
 */
export async function resendDelivery(env: Env, accountId: string, id: string): Promise<boolean> {
  const row = await findDelivery(env.DB, accountId, id);
  if (!row) return false;
  let message: WebhookQueueMessage;
  if (row.type === "webhook.test") {
    message = { event_id: row.id, type: row.type, account_id: accountId, url: row.url };
  } else if (row.type === "batch.completed") {
    const batchId = batchIdOfEvent(row.id);
    if (!batchId) return false;
    message = { event_id: row.id, type: row.type, batch_id: batchId, resend: true };
  } else if (row.job_id) {
    message = { event_id: row.id, type: row.type, job_id: row.job_id, resend: true };
  } else {
    return false;
  }
  await env.WEBHOOKS_QUEUE.send(message);
  return true;
}

/** A new signing secret; the one it replaces keeps signing beside it until the time returned. */
export async function rotateWebhookSecret(env: Env, accountId: string, now = Date.now()) {
  const secret = newWebhookSecret();
  const previousUntil = new Date(now + PREVIOUS_SECRET_HOURS * 3_600_000).toISOString();
  await rotateSigningSecret(env.DB, accountId, secret, previousUntil);
  return { secret, previousUntil };
}
