// A job's backstop (the at-least-once side of dispatch): what each delivery of the job's jobs-
// queue message does to keep it going. A new job is handed to the extractor at once
// (edge/jobs/start.ts: edge/jobs/dispatch.ts, in waitUntil) with one message queued for it,
// delayed; every delivery of that message (edge/queues/jobs.ts) asks keepJobGoing:
//   settled, failed, expired or gone    → nothing more (the chain ends)
//   an attempt holds a live lease       → look again when the lease would run out
//   queued, or its attempt's lease ran out (the extractor died, hung or lost the call)
//                                        → a new attempt (edge/jobs/lifecycle.ts refuses a
//                                          second start, so the create route's dispatch and
//                                          this one never both run), up to MAX_ATTEMPTS, then
//                                          the job fails
import type { JobMessage } from "../../schema/messages.ts";
import { logEvent } from "../log.ts";
import { dispatchJob } from "./dispatch.ts";
import {
  isFinalStatus,
  leaseIsLive,
  leaseSecondsFor,
  MAX_ATTEMPTS,
  readAttemptState,
} from "./lifecycle.ts";
import { failUnsettled } from "./settlement.ts";

/** Growing delays between failed dispatches: 5 s, 10 s, 20 s … capped at 5 minutes. */
export function retryDelaySeconds(failures: number): number {
  return Math.min(300, 5 * 2 ** Math.max(0, failures - 1));
}

/** When to look at the job again (seconds), or null when it needs no more looks. */
export async function keepJobGoing(
  env: Env,
  job: JobMessage,
  now = Date.now(),
): Promise<{ delaySeconds: number; failures?: number } | null> {
  const state = await readAttemptState(env, job);
  if (!state || state.settled || isFinalStatus(state.status)) return null;
  if (leaseIsLive(state, now)) {
    const left = Date.parse(state.leaseExpiresAt ?? "") - now;
    return { delaySeconds: Math.max(1, Math.ceil(left / 1000) + 1) };
  }
  if (state.attempts >= MAX_ATTEMPTS) {
    await failUnsettled(
      env,
      job,
      "ExtractionFailed",
      "the job could not be processed after repeated attempts",
    );
    return null;
  }
  if (state.attemptId !== null) {
    logEvent("warn", "job.lease_lost", { job: job.id, attempt: state.attemptId, kind: job.kind });
  }
  const outcome = await dispatchJob(env, job);
  switch (outcome.kind) {
    case "accepted":
      return { delaySeconds: outcome.leaseSeconds + 1 };
    case "not-started":
      // Someone else started an attempt a moment ago (or the job just settled): look later.
      return { delaySeconds: leaseSecondsFor(env) };
    case "busy":
      return { delaySeconds: outcome.retryAfterSeconds, failures: job.failures };
    case "refused":
      return null;
    case "failed": {
      const failures = (job.failures ?? 0) + 1;
      return { delaySeconds: retryDelaySeconds(failures), failures };
    }
  }
}
