// The webhook-queue consumer: one delivery attempt per message, retried with growing delays.
// Redirects are never followed and the URL is checked again at send time.
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { accounts, frames, jobs } from "../../schema/db.ts";
import type { WebhookMessage } from "../../schema/messages.ts";
import { checkUrl } from "../../schema/url-safety.ts";
import { edgeConfig } from "../config.ts";
import { fileLinker } from "../files.ts";
import { callbackBase } from "../jobs/extract-request.ts";
import { logEvent } from "../log.ts";
import { filesAreLive, jobToApi } from "../serialize.ts";
import { allowsPrivateNetwork } from "../sources.ts";
import { signWebhook } from "../webhooks.ts";
import type { ParsedMessage } from "./parse.ts";

const DELIVERY_TIMEOUT_MS = 10_000;

/** 2 s, 4 s, 8 s … capped at one hour. */
export function webhookRetryDelay(attempts: number): number {
  return Math.min(3600, 2 ** Math.max(1, attempts));
}

type Outcome = "delivered" | "retry" | "drop";
interface Delivery {
  outcome: Outcome;
  /** The receiver's answer, when it gave one. */
  status?: number;
}

async function deliver(env: Env, event: WebhookMessage): Promise<Delivery> {
  const db = drizzle(env.DB);
  const [row] = await db.select().from(jobs).where(eq(jobs.id, event.job_id));
  if (!row?.webhookUrl) return { outcome: "drop" };
  const target = checkUrl(row.webhookUrl, {
    allowPrivate: allowsPrivateNetwork(env),
    requireHttps: true,
  });
  if (!target.ok) {
    logEvent("warn", "webhook.refused", { job: row.id, reason: target.reason });
    return { outcome: "drop" };
  }
  const [account] = await db
    .select({ secret: accounts.webhookSecret })
    .from(accounts)
    .where(eq(accounts.id, row.accountId));
  if (!account) return { outcome: "drop" };
  const frameRows = await db
    .select()
    .from(frames)
    .where(eq(frames.jobId, row.id))
    .orderBy(frames.index);
  const linker =
    filesAreLive(row) && row.expiresAt
      ? fileLinker(edgeConfig(env).secrets.fileUrlSecret, callbackBase(env), row.expiresAt)
      : null;
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    type: event.type,
    timestamp: new Date(timestamp * 1000).toISOString(),
    data: await jobToApi(row, frameRows, linker),
  });
  const response = await fetch(target.url, {
    method: "POST",
    redirect: "manual",
    signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    headers: {
      "content-type": "application/json",
      "user-agent": "Stills-Webhooks/1",
      "webhook-id": event.event_id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": await signWebhook(account.secret, event.event_id, timestamp, body),
    },
    body,
  });
  await response.body?.cancel();
  const delivered = response.status >= 200 && response.status < 300;
  return { outcome: delivered ? "delivered" : "retry", status: response.status };
}

export async function consumeWebhooks(messages: ParsedMessage<WebhookMessage>[], env: Env) {
  for (const message of messages) {
    const event = message.body;
    let delivery: Delivery;
    let error: string | undefined;
    try {
      delivery = await deliver(env, event);
    } catch (err) {
      error = String(err);
      delivery = { outcome: "retry" };
    }
    const fields = {
      job: event.job_id,
      event_id: event.event_id,
      type: event.type,
      delivery_attempt: message.attempts,
      status: delivery.status,
      error,
    };
    if (delivery.outcome === "retry") {
      const delaySeconds = webhookRetryDelay(message.attempts);
      logEvent("warn", "webhook.retried", { ...fields, retry_in_seconds: delaySeconds });
      message.retry({ delaySeconds });
    } else {
      if (delivery.outcome === "delivered") logEvent("info", "webhook.delivered", fields);
      message.ack();
    }
  }
}
