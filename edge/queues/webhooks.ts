// The webhook-queue consumer: one delivery attempt per message (edge/webhook-send.ts). A job's
// event is retried with growing delays; a resend and a test event are one attempt each
// (decision 0210).
import type { WebhookQueueMessage } from "../../schema/webhook-deliveries.ts";
import { logEvent } from "../log.ts";
import { type Delivery, deliverWebhook, triggerOf, webhookRetryDelay } from "../webhook-send.ts";
import type { ParsedMessage } from "./parse.ts";

export async function consumeWebhooks(messages: ParsedMessage<WebhookQueueMessage>[], env: Env) {
  for (const message of messages) {
    const event = message.body;
    const trigger = triggerOf(event);
    let delivery: Delivery;
    try {
      delivery = await deliverWebhook(env, event, trigger);
    } catch (err) {
      delivery = { outcome: "retry", error: String(err) };
    }
    const fields = {
      job: "job_id" in event ? event.job_id : undefined,
      event_id: event.event_id,
      type: event.type,
      trigger,
      delivery_attempt: message.attempts,
      status: delivery.status,
      error: delivery.error,
    };
    // A resend or a test is one attempt that someone is watching: never a new retry series.
    if (delivery.outcome === "retry" && trigger === "automatic") {
      const delaySeconds = webhookRetryDelay(message.attempts);
      logEvent("warn", "webhook.retried", { ...fields, retry_in_seconds: delaySeconds });
      message.retry({ delaySeconds });
    } else {
      if (delivery.outcome === "delivered") logEvent("info", "webhook.delivered", fields);
      else if (delivery.outcome === "retry") logEvent("warn", "webhook.not_delivered", fields);
      message.ack();
    }
  }
}
