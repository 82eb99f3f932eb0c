// The results-queue consumer: a result the result route stored but could not settle in the
// request (edge/jobs/attempts.ts acceptResult) is settled here, from R2, by the job's own
// settlement (edge/jobs/settlement.ts), which settles a job once however often it arrives.
import { ExtractResultSchema, type ResultMessage } from "../../schema/messages.ts";
import { settle } from "../jobs/settlement.ts";
import { errorFields, logEvent } from "../log.ts";
import type { ParsedMessage } from "./parse.ts";

export async function consumeResults(messages: ParsedMessage<ResultMessage>[], env: Env) {
  for (const message of messages) {
    try {
      const object = await env.FILES.get(message.body.result_key);
      const stored = object ? ExtractResultSchema.safeParse(await object.json()) : null;
      if (stored?.success) await settle(env, stored.data);
      else if (stored) {
        // The result route checked it before storing it: this object was changed since, and
        // never parses however often it is read, so it is dropped (the job's backstop ends it).
        logEvent("error", "result.unreadable", {
          job: message.body.job_id,
          result_key: message.body.result_key,
          issue: stored.error.issues[0]?.message,
        });
      }
      message.ack();
    } catch (err) {
      logEvent("error", "result.settle_failed", {
        job: message.body.job_id,
        result_key: message.body.result_key,
        ...errorFields(err),
      });
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}
