// A job's start, right after creation (edge/jobs/create.ts, edge/jobs/demo.ts): its backstop
// message on the jobs queue (edge/jobs/backstop.ts keeps the job going from it), then its first
// attempt, handed to the extractor after the response.
import { waitUntil } from "cloudflare:workers";
import type { JobMessage } from "../../schema/messages.ts";
import { logEvent } from "../log.ts";
import { dispatchJob } from "./dispatch.ts";
import { type JobRef, leaseSecondsFor } from "./lifecycle.ts";

/** The first look at a new job: soon enough that a busy extractor at creation costs little. */
export function firstLookDelaySeconds(env: Env): number {
  return Math.min(10, leaseSecondsFor(env));
}

/**
 * Starts a job that was just recorded: queues its backstop message first (a job must never
 * depend on this request's waitUntil alone), then hands it to the extractor at once, after the
 * response. Throws when the message could not be queued; the caller fails the job.
 */
export async function startJob(env: Env, job: JobRef, requestId: string | undefined) {
  const message: JobMessage = { kind: job.kind, id: job.id };
  await env.JOBS_QUEUE.send(message, { delaySeconds: firstLookDelaySeconds(env) });
  waitUntil(
    dispatchJob(env, job, { requestId }).catch((err) =>
      // The backstop message tries again.
      logEvent("error", "job.dispatch_failed", {
        job: job.id,
        request: requestId,
        error: String(err),
      }),
    ),
  );
}
