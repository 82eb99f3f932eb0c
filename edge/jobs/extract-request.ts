// What the edge sends the extractor for one attempt of a job: the job's options within its
// plan, where to send files and the result, and a token valid for this attempt only.
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { accounts } from "../../schema/db.ts";
import type { ExtractRequest, JobOptions } from "../../schema/messages.ts";
import { DEMO } from "../../schema/plans.ts";
import { edgeConfig, publicBaseUrl } from "../config.ts";
import { planOf } from "../plan-of.ts";
import { attemptToken } from "./attempt-token.ts";
import type { JobRef } from "./lifecycle.ts";
import { storedJobOptions } from "./read.ts";
import { tenantOf as tenantOfJob } from "./store/attempts.ts";
import { demoJobRow } from "./store/demo.ts";
import { jobRowById } from "./store/jobs.ts";

export const DEMO_OPTIONS: JobOptions = {
  mode: "count",
  count: DEMO.frames,
  format: DEMO.format,
  resolution: 720,
  max_width: DEMO.max_width,
  output: "urls",
};

/**
 * How long an attempt's token lasts: the extractor's longest job (its 900-second deadline),
 * the uploads after it, and the result post. A token outliving its attempt is harmless: the
 * attempt's files and result are refused once another attempt has settled the job.
 */
export const ATTEMPT_TOKEN_SECONDS = 900 + 600;

export function callbackBase(env: Env): string {
  return publicBaseUrl(env);
}

async function callback(env: Env, job: JobRef, attemptId: string) {
  const expiry = Math.floor(Date.now() / 1000) + ATTEMPT_TOKEN_SECONDS;
  const token = await attemptToken(
    edgeConfig(env).secrets.internalToken,
    { kind: job.kind, jobId: job.id, attemptId },
    expiry,
  );
  return { base_url: callbackBase(env), token };
}

/** The request for this attempt, or null when the job's row is gone. */
export async function buildExtractRequest(
  env: Env,
  job: JobRef,
  attemptId: string,
  leaseSeconds: number,
): Promise<ExtractRequest | null> {
  const db = drizzle(env.DB);
  const attempt = { attempt_id: attemptId, lease_seconds: leaseSeconds };
  if (job.kind === "demo") {
    const row = await demoJobRow(db, job.id);
    if (!row) return null;
    // What the demo asked of a moving preview, stored with it at creation (edge/jobs/demo.ts).
    const animated = (row.animated as { options?: JobOptions["animated"] } | null)?.options;
    return {
      job_id: row.id,
      kind: "demo",
      // Demo clients are told apart by the hash of their address (per /64 for IPv6).
      tenant: `demo:${row.ipHash}`,
      url: row.sourceUrl,
      platform: row.platform,
      options: animated ? { ...DEMO_OPTIONS, animated } : DEMO_OPTIONS,
      max_video_seconds: DEMO.max_seconds,
      clip_to_max: true,
      max_frames: DEMO.frames,
      callback: await callback(env, job, attemptId),
      ...attempt,
    };
  }
  const row = await jobRowById(db, job.id);
  if (!row) return null;
  const [account] = await db
    .select({ plan: accounts.plan })
    .from(accounts)
    .where(eq(accounts.id, row.accountId));
  const plan = planOf(account);
  const options = storedJobOptions(row.id, row.options);
  return {
    job_id: row.id,
    kind: "job",
    tenant: `account:${row.accountId}`,
    url: row.sourceUrl,
    platform: row.platform,
    options: {
      ...options,
      max_width: Math.min(options.max_width ?? plan.limits.max_width, plan.limits.max_width),
    },
    max_video_seconds: plan.limits.max_video_minutes * 60,
    clip_to_max: false,
    max_frames: plan.limits.max_frames_per_job,
    callback: await callback(env, job, attemptId),
    ...attempt,
  };
}

/** Who an attempt's container instance is chosen by (edge/jobs/dispatch.ts poolInstanceFor). */
export function tenantOf(env: Env, job: JobRef): Promise<string | null> {
  return tenantOfJob(env.DB, job);
}
