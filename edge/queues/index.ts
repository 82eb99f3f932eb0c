// Routes each queue's batches to its consumer. Dead letters: a job whose dispatch kept
// failing ends `failed` (never stuck); other dead letters are logged.
import { JobMessageSchema, ResultMessageSchema } from "../../schema/messages.ts";
import { WebhookQueueMessageSchema } from "../../schema/webhook-deliveries.ts";
import { failUnsettled } from "../jobs/settlement.ts";
import { logEvent } from "../log.ts";
import { consumeJobs } from "./jobs.ts";
import { jobIdOf, parsedMessages } from "./parse.ts";
import { consumeResults } from "./results.ts";
import { consumeWebhooks } from "./webhooks.ts";

async function consumeDeadLetters(batch: MessageBatch<unknown>, env: Env) {
  for (const message of batch.messages) {
    // Only a jobs-queue message names a job by `id`; a result message has `job_id` instead.
    const job = JobMessageSchema.safeParse(message.body);
    if (job.success && !ResultMessageSchema.safeParse(message.body).success) {
      await failUnsettled(
        env,
        job.data,
        "ExtractionFailed",
        "the job could not be processed after repeated attempts",
      );
    } else {
      logEvent("error", "queue.dead_letter_dropped", {
        job: jobIdOf(message.body),
        body: message.body,
      });
    }
    message.ack();
  }
}

export async function handleQueueBatch(batch: MessageBatch, env: Env, _ctx?: ExecutionContext) {
  const queue = batch.queue.replace(/-(production|staging)$/, "");
  switch (queue) {
    case "stills-jobs":
      return consumeJobs(parsedMessages(batch, JobMessageSchema), env);
    case "stills-results":
      return consumeResults(parsedMessages(batch, ResultMessageSchema), env);
    case "stills-webhooks":
      return consumeWebhooks(parsedMessages(batch, WebhookQueueMessageSchema), env);
    case "stills-dead-letters":
      return consumeDeadLetters(batch, env);
    default:
      logEvent("error", "queue.no_consumer", { queue: batch.queue });
      batch.retryAll();
  }
}
