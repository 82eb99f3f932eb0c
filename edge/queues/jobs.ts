// The jobs-queue consumer: the at-least-once backstop of dispatch, as a thin adapter. Each
// delivery of a job's message asks edge/jobs/backstop.ts keepJobGoing what to do, and queues
// the next look with the delay it says. The message is acked and re-sent with its delay rather
// than retried, so a long job spends no queue retries; a consumer that throws retries the
// message itself (dead letters end the job).
import type { JobMessage } from "../../schema/messages.ts";
import { keepJobGoing, retryDelaySeconds } from "../jobs/backstop.ts";
import { logEvent } from "../log.ts";
import type { ParsedMessage } from "./parse.ts";

export async function consumeJobs(messages: ParsedMessage<JobMessage>[], env: Env) {
  for (const message of messages) {
    try {
      const next = await keepJobGoing(env, message.body);
      if (next) {
        const body: JobMessage = { kind: message.body.kind, id: message.body.id };
        if (next.failures !== undefined) body.failures = next.failures;
        await env.JOBS_QUEUE.send(body, { delaySeconds: next.delaySeconds });
      }
      message.ack();
    } catch (err) {
      logEvent("error", "job.backstop_failed", {
        job: message.body.id,
        kind: message.body.kind,
        error: String(err),
      });
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
