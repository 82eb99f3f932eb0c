// How a job ends, exactly once: with the extractor's result (the result route, or the results
// queue when settling in the request failed), or with a failure the edge decides (a refused
// call, no attempts left, the cron, a cost the account cannot pay). The `settlements` row
// (primary key job_id) is written in the same D1 batch as the job's final state and its frames
// (edge/jobs/settle.ts), so a result delivered twice, or a second attempt's result, finds the
// job settled and only cleans up its own files. Credits are settled by ledger entry id,
// idempotent on its own; a job the account cannot pay for once its real cost is known ends
// failed with InsufficientBalance, uncharged. Then the job's waiters wake and its webhook is
// queued.
import { creditsForRepeat } from "../../schema/billing.ts";
import type { ExtractErrorName, JobMessage, WebhookMessage } from "../../schema/messages.ts";
import { jobWaiter } from "../durable/job-waiter.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { holdAndFreeCover } from "../storage/ledger.ts";
import { giveBackDemoPreview } from "./demo-allowance.ts";
import type { JobRef } from "./lifecycle.ts";
import { leastCreditsOnceProbed, resultCredits } from "./options.ts";
import { storedJobOptions } from "./read.ts";
import { type Settlement, type SettlingJob, writeSettlement } from "./settle.ts";
import { jobAccountAndOptions, jobStatus } from "./store/jobs.ts";
import { reuseMarks } from "./store/reuse.ts";
import { settledAttempt, settlingRow } from "./store/settlement.ts";

// For failures the edge decides itself (failJob) and for a result without a user message. "Try
// again" only where trying again can help: the edge's own ExtractionFailed is a job it could
// not queue, run or finish (the extractor's carries its own message).
const USER_MESSAGES: Record<ExtractErrorName, string> = {
  InvalidUrl: "That link isn't a supported public video URL.",
  NoVideoFound: "We couldn't find a video at that link.",
  PrivateContent: "This video is private, deleted or needs a login, so we can't read it.",
  DownloadFailed: "We couldn't download the video from this link.",
  VideoTooLong: "This video is longer than your plan allows.",
  TooManyFrames: "This job would produce more frames than your plan allows.",
  ExtractionFailed:
    "We couldn't finish this job on our side. Nothing was charged; please try again.",
};

/** Ends a job as failed without a result from the extractor (refused, or out of retries). */
async function failJob(env: Env, job: JobMessage, name: ExtractErrorName, message: string) {
  await settle(env, edgeFailure(job, { name, message, userMessage: USER_MESSAGES[name] }));
}

/**
 * Ends a running job whose span alone costs `least` credits, more than its hold and the free
 * credits: failed with InsufficientBalance, uncharged, its hold released, before its attempt
 * decodes anything (the attempt learns it from its lease renewal's 409).
 */
async function failUnaffordable(env: Env, job: Pick<JobMessage, "kind" | "id">, least: number) {
  const message = `the video the job covers costs at least ${least} credits, more than its hold and the account's free credits; it was stopped before extraction and not charged`;
  await settle(env, refusedForCost(edgeFailure(job, null), message));
}

/** A failed settlement written by the edge itself (attempt "edge"), nothing delivered. */
function edgeFailure(job: Pick<JobMessage, "kind" | "id">, error: Settlement["error"]): Settlement {
  return {
    job_id: job.id,
    kind: job.kind,
    attempt_id: "edge",
    status: "failed",
    duration_seconds: null,
    processed_seconds: null,
    width: null,
    height: null,
    requested_resolution: null,
    delivered_resolution: null,
    resolution_note: null,
    frames: [],
    zip: null,
    error,
  };
}

/** Deletes every object under a prefix, page by page. */
export async function deletePrefix(env: Env, prefix: string) {
  let cursor: string | undefined;
  do {
    const listed = await env.FILES.list({ prefix, cursor });
    const keys = listed.objects.map((o) => o.key);
    if (keys.length > 0) await env.FILES.delete(keys);
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
}

function deleteAttemptFiles(env: Env, result: Settlement) {
  return deletePrefix(env, `${result.kind}/${result.job_id}/${result.attempt_id}/`);
}

async function enqueueWebhook(env: Env, result: Settlement) {
  const event: WebhookMessage = {
    event_id: `msg_${result.job_id}_${result.status}`,
    type: result.status === "completed" ? "job.completed" : "job.failed",
    job_id: result.job_id,
  };
  await env.WEBHOOKS_QUEUE.send(event);
}

/** A repeat served an earlier job's frames (decision 0350, edge/jobs/reuse.ts). */
export interface Reuse {
  /** The earlier job whose result this is. */
  reusedFrom: string;
  /** The job under whose prefix the files lie. */
  filesFrom: string;
}

/**
 * queued | processing → completed | failed with this result: the settlement batch, which
 * writes the job's final state only while it is unsettled, then its waiters and webhook. A
 * `reuse` settles a repeat with the earlier job's result: charged creditsForRepeat (0), its
 * reuse marks in the same batch.
 */
export async function settle(env: Env, reported: Settlement, reuse: Reuse | null = null) {
  const result = withUserMessage(reported);
  const row = await settlingRow(env.DB, { kind: result.kind, id: result.job_id });
  if (!row) return;

  const previous = await settledAttempt(env.DB, result.job_id);
  if (previous !== null) {
    if (previous !== result.attempt_id) {
      // Another attempt already finished this job: this one's files are orphans.
      await deleteAttemptFiles(env, result);
    } else if (row.webhook_url) {
      // A redelivery of the settled result: the send after the batch may be what failed.
      // Receivers drop the duplicate by its stable webhook-id. The job's own status says
      // which event it was (a result refused for its cost ended failed).
      const settled = await jobStatus(env.DB, { kind: "job", id: result.job_id });
      await enqueueWebhook(env, {
        ...result,
        status: settled === "failed" ? "failed" : result.status,
      });
    }
    return;
  }

  const plan = planOf(row.plan);
  const job: SettlingJob = {
    table: result.kind === "demo" ? "demo_jobs" : "jobs",
    accountId: row.account_id,
    options: row.options ? storedJobOptions(result.job_id, row.options) : null,
    plan,
  };
  const cost = reuse
    ? creditsForRepeat()
    : job.accountId && job.options
      ? resultCredits(result, job.options, plan)
      : 0;
  let final = result;
  const marks = reuse ? [reuseMarks(env.DB, result.job_id, reuse.reusedFrom, reuse.filesFrom)] : [];
  let outcome = await writeSettlement(env, job, result, cost, marks);
  if (outcome === "unaffordable") {
    final = refusedForCost(
      result,
      `the job cost ${cost} credits once the video was known, more than its hold and the account's free credits; it was not charged`,
    );
    outcome = await writeSettlement(env, job, final, 0);
    // Nothing of a refused job is delivered.
    await deleteAttemptFiles(env, result);
  }
  if (outcome === "already-settled") {
    await deleteAttemptFiles(env, result);
    return;
  }
  logEvent("info", "job.settled", {
    job: result.job_id,
    attempt: result.attempt_id,
    kind: result.kind,
    status: final.status,
    error: final.error?.name,
    credits: final === result ? cost : 0,
  });
  // A failed preview does not use the address's daily allowance.
  if (result.kind === "demo" && final.status === "failed")
    await giveBackDemoPreview(env, result.job_id);
  await wakeWaiters(env, result);
  if (row.webhook_url) await enqueueWebhook(env, final);
  if (job.accountId) await tellJobEnded(env, { jobId: result.job_id, accountId: job.accountId });
}

/** What follows an account's job's end elsewhere (a batch feeds its next item, decision 0340). */
export type JobEndListener = (
  env: Env,
  ended: { jobId: string; accountId: string },
) => Promise<void>;
const jobEndListeners: JobEndListener[] = [];

/**
 * Registered by the worker's entry (edge/index.ts): a listener may create jobs, and creating a
 * job may end one (a job that cannot be queued), so importing it here would be a cycle.
 */
export function onJobEnded(listener: JobEndListener) {
  if (!jobEndListeners.includes(listener)) jobEndListeners.push(listener);
}

/** Each listener once per settlement; a failing one never fails the settlement (the cron repeats it). */
async function tellJobEnded(env: Env, ended: { jobId: string; accountId: string }) {
  for (const listener of jobEndListeners) {
    try {
      await listener(env, ended);
    } catch (err) {
      logEvent("error", "job.end_listener_failed", { job: ended.jobId, error: String(err) });
    }
  }
}

/** The job's waiters read D1 again now; if this fails they still read it at their deadline. */
async function wakeWaiters(env: Env, result: Settlement) {
  try {
    const woken = await jobWaiter(env, result.kind, result.job_id).settled();
    if (woken > 0) logEvent("info", "job.waiters_woken", { job: result.job_id, woken });
  } catch (err) {
    logEvent("warn", "job.waiters_not_woken", { job: result.job_id, error: String(err) });
  }
}

/** An error always carries a sentence for end users, ours when the extractor sent none. */
function withUserMessage(result: Settlement): Settlement {
  if (!result.error || result.error.userMessage) return result;
  const name = result.error.name;
  const userMessage = name in USER_MESSAGES ? USER_MESSAGES[name as ExtractErrorName] : "";
  return { ...result, error: { ...result.error, userMessage: userMessage || "The job failed." } };
}

/** The same job, ended failed and uncharged because the account could not cover its cost. */
function refusedForCost(result: Settlement, message: string): Settlement {
  return {
    ...result,
    status: "failed",
    frames: [],
    zip: null,
    delivered_resolution: null,
    resolution_note: null,
    error: {
      name: "InsufficientBalance",
      message,
      userMessage:
        "This job needed more credits than your account had, so it was stopped and not charged. Buy a pack or upgrade your plan, then run it again.",
    },
  };
}

/**
 * processing → failed with InsufficientBalance, uncharged, when the span the probe found
 * (`processedSeconds`, sent by the running attempt with a lease renewal) already costs more
 * than the job's hold and the account's free credits: the job could never be charged, so its
 * attempt stops now instead of decoding to its end. True when the job was stopped.
 */
export async function stopIfUnaffordable(
  env: Env,
  job: JobRef,
  processedSeconds: number,
): Promise<boolean> {
  if (job.kind !== "job") return false;
  const row = await jobAccountAndOptions(env.DB, job.id);
  if (!row?.account_id || !row.options) return false;
  const least = leastCreditsOnceProbed(storedJobOptions(job.id, row.options), processedSeconds);
  if (least <= 0 || (await holdAndFreeCover(env.DB, row.account_id, job.id, least))) return false;
  await failUnaffordable(env, job, least);
  return true;
}

/** Any unsettled state → failed, without a result from the extractor. */
export function failUnsettled(
  env: Env,
  job: JobRef | JobMessage,
  name: ExtractErrorName,
  message: string,
): Promise<void> {
  return failJob(env, { kind: job.kind, id: job.id }, name, message);
}
