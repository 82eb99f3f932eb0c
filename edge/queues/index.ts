// Routes each queue's batches to its consumer. Dead letters: a job whose dispatch kept
// failing ends `failed` (never stuck); other dead letters are logged.
import type { JobMessage, ResultMessage, WebhookMessage } from "../../schema/messages.ts";
import { failUnsettled } from "../jobs/lifecycle.ts";
import { logEvent } from "../log.ts";
import { consumeJobs } from "./jobs.ts";
import { consumeResults } from "./results.ts";
import { consumeWebhooks } from "./webhooks.ts";

async function consumeDeadLetters(batch: MessageBatch<unknown>, env: Env) {
  for (const message of batch.messages) {
    const body = message.body as Partial<JobMessage & ResultMessage & WebhookMessage>;
    if (body.id && (body.kind === "job" || body.kind === "demo") && !body.result_key) {
      await failUnsettled(
        env,
        body as JobMessage,
        "ExtractionFailed",
        "the job could not be processed after repeated attempts",
      );
    } else {
      logEvent("error", "queue.dead_letter_dropped", {
        job: typeof body.id === "string" ? body.id : body.job_id,
        body,
      });
    }
    message.ack();
  }
}

export async function handleQueueBatch(batch: MessageBatch, env: Env, _ctx?: ExecutionContext) {
  const queue = batch.queue.replace(/-(production|staging)$/, "");
  switch (queue) {
    case "stills-jobs":
      return consumeJobs(batch as MessageBatch<JobMessage>, env);
    case "stills-results":
      return consumeResults(batch as MessageBatch<ResultMessage>, env);
    case "stills-webhooks":
      return consumeWebhooks(batch as MessageBatch<WebhookMessage>, env);
    case "stills-dead-letters":
      return consumeDeadLetters(batch, env);
    default:
      logEvent("error", "queue.no_consumer", { queue: batch.queue });
      batch.retryAll();
  }
}
