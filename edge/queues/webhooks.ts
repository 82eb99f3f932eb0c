// The webhook-queue consumer: one delivery attempt per message, retried with growing delays.
// Redirects are never followed and the URL is checked again at send time.
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { accounts, frames, jobs } from "../../schema/db.ts";
import type { WebhookMessage } from "../../schema/messages.ts";
import { checkUrl } from "../../schema/url-safety.ts";
import { fileLinker } from "../files.ts";
import { filesAreLive, jobToApi } from "../serialize.ts";
import { allowsPrivateNetwork } from "../sources.ts";
import { signWebhook } from "../webhooks.ts";
import { callbackBase } from "./jobs.ts";

const DELIVERY_TIMEOUT_MS = 10_000;

/** 2 s, 4 s, 8 s … capped at one hour. */
export function webhookRetryDelay(attempts: number): number {
  return Math.min(3600, 2 ** Math.max(1, attempts));
}

type Outcome = "delivered" | "retry" | "drop";

async function deliver(env: Env, event: WebhookMessage): Promise<Outcome> {
  const db = drizzle(env.DB);
  const [row] = await db.select().from(jobs).where(eq(jobs.id, event.job_id));
  if (!row?.webhookUrl) return "drop";
  const target = checkUrl(row.webhookUrl, {
    allowPrivate: allowsPrivateNetwork(env),
    requireHttps: true,
  });
  if (!target.ok) {
    console.warn(`webhook for ${row.id} refused: ${target.reason}`);
    return "drop";
  }
  const [account] = await db
    .select({ secret: accounts.webhookSecret })
    .from(accounts)
    .where(eq(accounts.id, row.accountId));
  if (!account) return "drop";
  const frameRows = await db
    .select()
    .from(frames)
    .where(eq(frames.jobId, row.id))
    .orderBy(frames.index);
  const linker =
    filesAreLive(row) && row.expiresAt
      ? fileLinker(env.FILE_URL_SECRET, callbackBase(env), row.expiresAt)
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
  return response.status >= 200 && response.status < 300 ? "delivered" : "retry";
}

export async function consumeWebhooks(batch: MessageBatch<WebhookMessage>, env: Env) {
  for (const message of batch.messages) {
    let outcome: Outcome;
    try {
      outcome = await deliver(env, message.body);
    } catch (err) {
      console.warn(`webhook ${message.body.event_id} attempt ${message.attempts} failed: ${err}`);
      outcome = "retry";
    }
    if (outcome === "retry") message.retry({ delaySeconds: webhookRetryDelay(message.attempts) });
    else message.ack();
  }
}
