// The jobs-queue consumer: sends each job to the extractor and holds the call open while it
// runs, so a crashed extractor shows up as a failed call and the message is retried (a new
// attempt). The result itself comes back through the results queue.
import { eq } from "drizzle-orm";
import type { DrizzleD1Database } from "drizzle-orm/d1";
import { drizzle } from "drizzle-orm/d1";
import { accounts, demoJobs, jobs } from "../../schema/db.ts";
import type { ExtractRequest, JobMessage, JobOptions } from "../../schema/messages.ts";
import { DEMO, isPlanName, PLANS } from "../../schema/plans.ts";
import { extractorFor } from "../dispatch.ts";
import { failJob } from "./results.ts";

/** Growing delays between attempts: 5 s, 10 s, 20 s … capped at 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 5 * 2 ** Math.max(0, attempts - 1));
}

export const DEMO_OPTIONS: JobOptions = {
  mode: "count",
  count: DEMO.frames,
  format: DEMO.format,
  resolution: 720,
  max_width: DEMO.max_width,
  output: "urls",
};

export function callbackBase(env: Env): string {
  return env.PUBLIC_BASE_URL || "http://127.0.0.1:8787";
}

/**
 * Moves a job between queued and processing, and only while it is unsettled: a late dispatch
 * outcome must never reopen a job its result has already finished. False when it was not.
 */
async function setRunState(env: Env, message: JobMessage, status: "queued" | "processing") {
  const table = message.kind === "demo" ? "demo_jobs" : "jobs";
  const starting = status === "processing";
  const { meta } = await env.DB.prepare(
    `UPDATE ${table} SET status = ?1,
       started_at = CASE WHEN ?2 THEN coalesce(started_at, ?3) ELSE started_at END,
       attempts = attempts + ?2
     WHERE id = ?4 AND status IN ('queued', 'processing')
       AND NOT EXISTS (SELECT 1 FROM settlements WHERE job_id = ?4)`,
  )
    .bind(status, starting ? 1 : 0, new Date().toISOString(), message.id)
    .run();
  return meta.changes === 1;
}

async function buildRequest(
  db: DrizzleD1Database,
  env: Env,
  message: JobMessage,
): Promise<ExtractRequest | null> {
  const callback = { base_url: callbackBase(env), token: env.INTERNAL_TOKEN };
  if (message.kind === "demo") {
    const [row] = await db.select().from(demoJobs).where(eq(demoJobs.id, message.id));
    if (!row || !(await setRunState(env, message, "processing"))) return null;
    return {
      job_id: row.id,
      kind: "demo",
      url: row.sourceUrl,
      platform: row.platform,
      options: DEMO_OPTIONS,
      max_video_seconds: DEMO.max_seconds,
      clip_to_max: true,
      max_frames: DEMO.frames,
      callback,
    };
  }
  const [row] = await db.select().from(jobs).where(eq(jobs.id, message.id));
  if (!row || !(await setRunState(env, message, "processing"))) return null;
  const [account] = await db
    .select({ plan: accounts.plan })
    .from(accounts)
    .where(eq(accounts.id, row.accountId));
  const plan = PLANS[account && isPlanName(account.plan) ? account.plan : "free"];
  const options = row.options as JobOptions;
  return {
    job_id: row.id,
    kind: "job",
    url: row.sourceUrl,
    platform: row.platform,
    options: {
      ...options,
      max_width: Math.min(options.max_width ?? plan.limits.max_width, plan.limits.max_width),
    },
    max_video_seconds: plan.limits.max_video_minutes * 60,
    clip_to_max: false,
    max_frames: plan.limits.max_frames_per_job,
    callback,
  };
}

/** A busy extractor is no failure: the job waits in a new message, spending no retry. */
const BUSY_DELAY_SECONDS = 10;

export async function consumeJobs(batch: MessageBatch<JobMessage>, env: Env) {
  const db = drizzle(env.DB);
  const extractor = extractorFor(env);
  for (const message of batch.messages) {
    try {
      const request = await buildRequest(db, env, message.body);
      if (!request) {
        message.ack();
        continue;
      }
      const response = await extractor.extract(request);
      await response.body?.cancel();
      if (response.ok) {
        message.ack();
      } else if (response.status === 503) {
        await setRunState(env, message.body, "queued");
        const retryAfter = Number(response.headers.get("retry-after"));
        await env.JOBS_QUEUE.send(message.body, {
          delaySeconds: retryAfter > 0 ? retryAfter : BUSY_DELAY_SECONDS,
        });
        message.ack();
      } else if (response.status >= 400 && response.status < 500) {
        // The extractor refused the request itself: retrying cannot help.
        await failJob(
          env,
          message.body,
          "ExtractionFailed",
          `the extractor refused the job (HTTP ${response.status})`,
        );
        message.ack();
      } else {
        await setRunState(env, message.body, "queued");
        message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
      }
    } catch (err) {
      console.error(`dispatch of ${message.body.kind} ${message.body.id} failed`, err);
      await setRunState(env, message.body, "queued").catch(() => {});
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
