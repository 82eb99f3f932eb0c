// Sending one webhook event (decision 0210): the job's, the batch's or the test's payload, signed with the
// account's secrets (edge/webhooks.ts), posted once with redirects never followed and the URL
// checked again at send time, and the attempt written to the delivery log
// (edge/storage/webhooks.ts). The webhook-queue consumer (edge/queues/webhooks.ts) calls
// deliverWebhook once per message and retries as its outcome says.
import { drizzle } from "drizzle-orm/d1";
import { checkUrl } from "../schema/url-safety.ts";
import type {
  WebhookAttempt,
  WebhookQueueMessage,
  WebhookTestData,
  WebhookTrigger,
} from "../schema/webhook-deliveries.ts";
import { batchSummary } from "./batches/read.ts";
import { edgeConfig } from "./config.ts";
import { fileLinker } from "./files.ts";
import { callbackBase } from "./jobs/extract-request.ts";
import { frameRowsOf } from "./jobs/store/frames.ts";
import { jobRowById } from "./jobs/store/jobs.ts";
import { logEvent } from "./log.ts";
import { filesAreLive, jobToApi } from "./serialize.ts";
import { allowsPrivateNetwork } from "./sources.ts";
import { type DeliveryTarget, recordAttempt, signingSecretsOf } from "./storage/webhooks.ts";
import { type SigningSecrets, signatureHeader } from "./webhooks.ts";

const DELIVERY_TIMEOUT_MS = 10_000;

/** 2 s, 4 s, 8 s … capped at one hour. */
export function webhookRetryDelay(attempts: number): number {
  return Math.min(3600, 2 ** Math.max(1, attempts));
}

type Outcome = "delivered" | "retry" | "drop";
export interface Delivery {
  outcome: Outcome;
  /** The receiver's answer, when it gave one. */
  status?: number;
  error?: string;
}

/** An event ready to send: where, signed with which secrets, carrying what. */
interface Prepared {
  target: DeliveryTarget;
  secrets: SigningSecrets;
  data: unknown;
}

export function triggerOf(event: WebhookQueueMessage): WebhookTrigger {
  if (event.type === "webhook.test") return "test";
  return "resend" in event && event.resend ? "resend" : "automatic";
}

function secretsOf(env: Env, accountId: string): Promise<SigningSecrets | undefined> {
  return signingSecretsOf(env.DB, accountId);
}

async function prepare(env: Env, event: WebhookQueueMessage): Promise<Prepared | null> {
  if (event.type === "webhook.test") {
    const secrets = await secretsOf(env, event.account_id);
    if (!secrets) return null;
    const data: WebhookTestData = {
      object: "webhook_test",
      id: event.event_id,
      message: "A test event from Stills: your endpoint received and can verify it.",
    };
    const target = { id: event.event_id, accountId: event.account_id, type: event.type };
    return { target: { ...target, jobId: null, url: event.url }, secrets, data };
  }
  if (event.type === "batch.completed") {
    const batch = await batchSummary(env, event.batch_id);
    if (!batch?.webhookUrl) return null;
    const secrets = await secretsOf(env, batch.accountId);
    if (!secrets) return null;
    const target = { id: event.event_id, accountId: batch.accountId, type: event.type };
    return { target: { ...target, jobId: null, url: batch.webhookUrl }, secrets, data: batch.data };
  }
  const db = drizzle(env.DB);
  const row = await jobRowById(db, event.job_id);
  if (!row?.webhookUrl) return null;
  const secrets = await secretsOf(env, row.accountId);
  if (!secrets) return null;
  const frameRows = await frameRowsOf(db, row.id);
  const linker =
    filesAreLive(row) && row.expiresAt
      ? fileLinker(edgeConfig(env).secrets.fileUrlSecret, callbackBase(env), row.expiresAt)
      : null;
  const target: DeliveryTarget = {
    id: event.event_id,
    accountId: row.accountId,
    type: event.type,
    jobId: row.id,
    url: row.webhookUrl,
  };
  return { target, secrets, data: await jobToApi(row, frameRows, linker) };
}

function errorText(err: unknown): string {
  if (err instanceof Error && err.name === "TimeoutError") {
    return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  }
  return String(err).slice(0, 500);
}

/** One delivery attempt of the event; never throws for the receiver's sake. */
export async function deliverWebhook(
  env: Env,
  event: WebhookQueueMessage,
  trigger: WebhookTrigger,
): Promise<Delivery> {
  const prepared = await prepare(env, event);
  if (!prepared) return { outcome: "drop" } satisfies Delivery;
  const { target: where, secrets } = prepared;
  const now = Date.now();
  const attempt: WebhookAttempt = {
    attempted_at: new Date(now).toISOString(),
    status_code: null,
    error: null,
    latency_ms: 0,
    trigger,
  };
  const target = checkUrl(where.url, {
    allowPrivate: allowsPrivateNetwork(env),
    requireHttps: true,
  });
  if (!target.ok) {
    logEvent("warn", "webhook.refused", { job: where.jobId ?? undefined, reason: target.reason });
    await record(env, where, null, { ...attempt, error: `refused: ${target.reason}` });
    return { outcome: "drop", error: target.reason } satisfies Delivery;
  }
  const timestamp = Math.floor(now / 1000);
  const body = JSON.stringify({
    type: event.type,
    timestamp: new Date(timestamp * 1000).toISOString(),
    data: prepared.data,
  });
  let delivery: Delivery;
  try {
    const response = await fetch(target.url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        "content-type": "application/json",
        "user-agent": "Stills-Webhooks/1",
        "webhook-id": event.event_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": await signatureHeader(secrets, event.event_id, timestamp, body, now),
      },
      body,
    });
    attempt.status_code = response.status;
    await response.body?.cancel();
    const delivered = response.status >= 200 && response.status < 300;
    delivery = { outcome: delivered ? "delivered" : "retry", status: response.status };
  } catch (err) {
    attempt.error = errorText(err);
    delivery = { outcome: "retry", error: attempt.error };
  }
  attempt.latency_ms = Math.max(0, Date.now() - now);
  await record(env, where, body, attempt);
  return delivery;
}

/** The log is for reading: failing to write it never fails, or repeats, a delivery. */
async function record(
  env: Env,
  target: DeliveryTarget,
  body: string | null,
  attempt: WebhookAttempt,
) {
  try {
    await recordAttempt(env.DB, target, body, attempt);
  } catch (err) {
    logEvent("error", "webhook.log_failed", { event_id: target.id, error: String(err) });
  }
}
