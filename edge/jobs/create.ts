// Creating a job: check the source, apply plan limits, hold what the job is sure to cost, record
// the job and queue it. An Idempotency-Key makes a retried create return the first job unchanged.
import type { CreateJobRequest } from "../../schema/api.ts";
import { QUEUED } from "../../schema/job-status.ts";
import type { JobOptions } from "../../schema/messages.ts";
import type { Plan } from "../../schema/plans.ts";
import type { Requester } from "../context.ts";
import { isUniqueViolation } from "../credits.ts";
import { sha256Hex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { checkSourceUrl, checkWebhookUrl } from "../sources.ts";
import { createdJob } from "./lifecycle.ts";
import { jobNotice } from "./notice.ts";
import { checkPlanLimits, creditHold, normaliseOptions } from "./options.ts";
import { failUnsettled } from "./settlement.ts";
import { startJob } from "./start.ts";
import { activeJobCount, idempotentJob, jobCreationStatements } from "./store/jobs.ts";

/** Returns the id of the job this request created (or created before, on a retry). */
export async function createJob(
  c: Requester,
  body: CreateJobRequest,
  idempotencyKey: string | undefined,
): Promise<{ jobId: string; replayed: boolean }> {
  const account = c.account;
  const plan = planOf(account);

  const { wait: _wait, ...request } = body;
  const requestHash = await sha256Hex(JSON.stringify(request));
  if (idempotencyKey !== undefined) {
    const previous = await findIdempotentJob(c, idempotencyKey, requestHash);
    if (previous) return { jobId: previous, replayed: true };
  }

  const source = checkSourceUrl(body.url, c.env);
  const options = normaliseOptions(body, plan);
  if (options.webhook_url !== undefined) checkWebhookUrl(options.webhook_url, c.env);
  checkPlanLimits(options, plan);

  const jobId = crypto.randomUUID();
  const hold = creditHold(options);
  let created: boolean;
  try {
    created = await recordJob(c, {
      jobId,
      url: body.url,
      options,
      source,
      hold,
      maxActive: plan.limits.max_active_jobs,
      idempotencyKey,
      requestHash,
    });
  } catch (err) {
    // Two concurrent requests with one Idempotency-Key: the loser answers with the winner's job.
    if (idempotencyKey !== undefined && isUniqueViolation(err)) {
      const winner = await findIdempotentJob(c, idempotencyKey, requestHash);
      if (winner) return { jobId: winner, replayed: true };
    }
    throw err;
  }
  if (!created) throw await refusal(c, plan, hold);

  const job = { kind: "job" as const, id: jobId };
  const requestId = c.requestId;
  logEvent("info", "job.created", { job: jobId, request: requestId, account: account.id });
  try {
    await startJob(c.env, job, requestId);
  } catch (err) {
    // Never leave a job that nothing will run: end it (releasing its hold) and say so.
    logEvent("error", "job.not_queued", { job: jobId, request: requestId, error: String(err) });
    await failUnsettled(c.env, job, "ExtractionFailed", "the job could not be queued");
    throw new ApiError("ServiceUnavailable", "The job could not be queued; nothing was charged", {
      userMessage: "We couldn't start the job. Please try again in a moment.",
    });
  }
  return { jobId, replayed: false };
}

async function findIdempotentJob(c: Requester, key: string, requestHash: string) {
  const row = await idempotentJob(c.db, c.account.id, key);
  if (!row) return null;
  if (row.requestHash !== requestHash) {
    throw new ApiError(
      "InvalidRequest",
      "Idempotency-Key was already used with a different request body",
      {
        userMessage: "This Idempotency-Key belongs to another request. Use a new key.",
      },
    );
  }
  return row.jobId;
}

/** Why the job was not recorded: too many running jobs, or too few credits. */
async function refusal(c: Requester, plan: Plan, hold: number) {
  const active = await activeJobCount(c.db, c.account.id);
  if (active >= plan.limits.max_active_jobs) {
    return new ApiError(
      "RateLimited",
      `${active} jobs are still running; the ${plan.name} plan allows ${plan.limits.max_active_jobs} at once`,
      { userMessage: "Wait for a running job to finish before starting another.", retryAfter: 5 },
    );
  }
  return new ApiError(
    "InsufficientBalance",
    `this job costs at least ${hold} credit${hold === 1 ? "" : "s"} and the account has fewer available`,
    { userMessage: "You don't have enough credits for this job. Buy a pack or upgrade your plan." },
  );
}

/**
 * Records the job, its credit hold and its Idempotency-Key in one D1 batch (one transaction):
 * the job row is written only while the account has fewer running jobs than its plan allows
 * and enough free credits for the hold, and the hold only with the job. Concurrent creates
 * therefore cannot pass either limit. False when a limit refused the job.
 */
async function recordJob(
  c: Requester,
  job: {
    jobId: string;
    url: string;
    options: JobOptions;
    source: { platform: string; url: string };
    hold: number;
    maxActive: number;
    idempotencyKey: string | undefined;
    requestHash: string;
  },
): Promise<boolean> {
  const db = c.env.DB;
  const accountId = c.account.id;
  const statements = [
    createdJob(
      db,
      {
        id: job.jobId,
        accountId,
        url: job.url,
        sourceUrl: job.source.url,
        platform: job.source.platform,
        options: JSON.stringify(job.options),
        webhookUrl: job.options.webhook_url ?? null,
        creditsReserved: job.hold,
        requestedResolution: job.options.resolution,
        notice: jobNotice({
          id: job.jobId,
          status: QUEUED,
          expiresAt: null,
          framesCount: null,
          zipped: false,
          resolutionNote: null,
          errorMessage: null,
        }),
        // The request's id, so a failed job's page can name the request that created it.
        requestId: c.requestId ?? null,
      },
      job.maxActive,
    ),
    ...jobCreationStatements(db, {
      jobId: job.jobId,
      accountId,
      hold: job.hold,
      idempotency:
        job.idempotencyKey === undefined
          ? undefined
          : { key: job.idempotencyKey, requestHash: job.requestHash },
    }),
  ];
  const [inserted] = await db.batch(statements);
  return inserted.meta.changes === 1;
}
