// Creating a job: validate the source, apply plan limits, hold credits, record the job and
// queue it. An Idempotency-Key makes a retried create return the first job unchanged.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { CreateJobRequest } from "../../schema/api.ts";
import { idempotencyKeys, jobs } from "../../schema/db.ts";
import type { JobMessage, JobOptions } from "../../schema/messages.ts";
import { isPlanName, PLANS } from "../../schema/plans.ts";
import type { AppEnv } from "../context.ts";
import { releaseCredits, reserveCredits } from "../credits.ts";
import { sha256Hex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { failJob } from "../queues/results.ts";
import { checkSourceUrl, checkWebhookUrl } from "../sources.ts";
import { checkPlanLimits, creditHold, normaliseOptions } from "./options.ts";

export const ACTIVE_STATUSES = ["queued", "processing"] as const;

/** Returns the id of the job this request created (or created before, on a retry). */
export async function createJob(
  c: Context<AppEnv>,
  body: CreateJobRequest,
  idempotencyKey: string | undefined,
): Promise<{ jobId: string; replayed: boolean }> {
  const account = c.get("account");
  const db = c.get("db");
  const plan = PLANS[isPlanName(account.plan) ? account.plan : "free"];

  const { wait: _wait, ...request } = body;
  const requestHash = await sha256Hex(JSON.stringify(request));
  if (idempotencyKey !== undefined) {
    const previous = await findIdempotentJob(c, idempotencyKey, requestHash);
    if (previous) return { jobId: previous, replayed: true };
  }

  const source = await checkSourceUrl(body.url, c.env);
  const options = normaliseOptions(body, plan);
  if (options.webhook_url !== undefined) checkWebhookUrl(options.webhook_url, c.env);
  checkPlanLimits(options, plan);

  const [{ active }] = await db
    .select({ active: sql<number>`count(*)` })
    .from(jobs)
    .where(and(eq(jobs.accountId, account.id), inArray(jobs.status, [...ACTIVE_STATUSES])));
  if (active >= plan.limits.max_active_jobs) {
    throw new ApiError(
      "RateLimited",
      `${active} jobs are still running; the ${plan.name} plan allows ${plan.limits.max_active_jobs} at once`,
      { userMessage: "Wait for a running job to finish before starting another.", retryAfter: 5 },
    );
  }

  const jobId = crypto.randomUUID();
  const hold = creditHold(options, plan);
  const held = await reserveCredits(c.env.DB, account.id, jobId, hold);
  if (held === null) {
    throw new ApiError(
      "InsufficientBalance",
      `this job may cost up to ${hold} credits and the account has fewer available` +
        (options.mode !== "timestamps" && options.end === undefined
          ? " (without end, a job is held at the cost of the plan's longest video; set end to hold less)"
          : ""),
      {
        userMessage: "You don't have enough credits for this job. Buy a pack or upgrade your plan.",
      },
    );
  }

  try {
    await recordJob(c, {
      jobId,
      url: body.url,
      options,
      source,
      held,
      idempotencyKey,
      requestHash,
    });
  } catch (err) {
    await releaseCredits(c.env.DB, account.id, jobId);
    // Two concurrent requests with one Idempotency-Key: the loser answers with the winner's job.
    if (idempotencyKey !== undefined) {
      const winner = await findIdempotentJob(c, idempotencyKey, requestHash);
      if (winner) return { jobId: winner, replayed: true };
    }
    throw err;
  }
  const message: JobMessage = { kind: "job", id: jobId };
  try {
    await c.env.JOBS_QUEUE.send(message);
  } catch (err) {
    // Never leave a job that nothing will run: end it (releasing its hold) and say so.
    console.error(`queueing job ${jobId} failed`, err);
    await failJob(c.env, message, "ExtractionFailed", "the job could not be queued");
    throw new ApiError("ServiceUnavailable", "The job could not be queued; nothing was charged", {
      userMessage: "We couldn't start the job. Please try again in a moment.",
    });
  }
  return { jobId, replayed: false };
}

async function findIdempotentJob(c: Context<AppEnv>, key: string, requestHash: string) {
  const [row] = await c
    .get("db")
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, c.get("account").id), eq(idempotencyKeys.key, key)));
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

async function recordJob(
  c: Context<AppEnv>,
  job: {
    jobId: string;
    url: string;
    options: JobOptions;
    source: { platform: string; url: string };
    held: number;
    idempotencyKey: string | undefined;
    requestHash: string;
  },
) {
  const db = c.get("db");
  const accountId = c.get("account").id;
  const insertJob = db.insert(jobs).values({
    id: job.jobId,
    accountId,
    status: "queued",
    url: job.url,
    sourceUrl: job.source.url,
    platform: job.source.platform,
    options: job.options,
    webhookUrl: job.options.webhook_url ?? null,
    creditsReserved: job.held,
    requestedResolution: job.options.resolution,
    notice:
      "Queued. Poll GET /v1/jobs/{id}, pass wait=true, or set webhook_url to hear when it is done.",
  });
  if (job.idempotencyKey === undefined) {
    await insertJob;
    return;
  }
  await db.batch([
    insertJob,
    db.insert(idempotencyKeys).values({
      accountId,
      key: job.idempotencyKey,
      requestHash: job.requestHash,
      jobId: job.jobId,
    }),
  ]);
}
