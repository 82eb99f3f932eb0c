// The jobs-queue consumer: sends each job to the extractor and holds the call open while it
// runs, so a crashed extractor shows up as a failed call and the job is tried again (a new
// attempt). The result itself comes back through the results queue.
//
// Outcomes of one call: 2xx done; 503 busy (the pool, or the job's tenant, holds every slot it
// may: the job waits in a new message and spends no retry); another 4xx is final (the
// extractor refused the request, or the edge refused its result): the job fails now; anything
// else is a failure, tried again with growing delays, and after MAX_DISPATCH_FAILURES it fails.
//
// Production holds the call inside the handler, and the platform runs many consumers at once;
// a failure retries the message itself (dead letters end the job). The local queue delivers
// one batch at a time, so there (EXTRACTOR_DISPATCH=detached) the message is acked at once,
// the call is held in waitUntil, and a failure re-sends the job with its failure count.
import { waitUntil } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import type { DrizzleD1Database } from "drizzle-orm/d1";
import { drizzle } from "drizzle-orm/d1";
import { accounts, demoJobs, jobs } from "../../schema/db.ts";
import type { ExtractRequest, JobMessage, JobOptions } from "../../schema/messages.ts";
import { DEMO, isPlanName, PLANS } from "../../schema/plans.ts";
import type { ExtractorClient } from "../dispatch.ts";
import { dispatchesDetached, extractorFor } from "../dispatch.ts";
import { failJob } from "./results.ts";

/** As the queue's max_retries (wrangler.toml): attempts after the first, then the job fails. */
export const MAX_DISPATCH_FAILURES = 10;

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
      // Demo clients are told apart by the hash of their address (per /64 for IPv6).
      tenant: `demo:${row.ipHash}`,
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
    callback,
  };
}

/** A busy extractor is no failure: the job waits in a new message, spending no retry. */
const BUSY_DELAY_SECONDS = 10;

type CallOutcome =
  | { kind: "done" }
  | { kind: "busy"; retryAfterSeconds: number }
  | { kind: "refused"; reason: string }
  | { kind: "failed" };

async function callExtractor(
  extractor: ExtractorClient,
  request: ExtractRequest,
): Promise<CallOutcome> {
  let response: Response;
  try {
    response = await extractor.extract(request);
  } catch (err) {
    console.error(`extractor call for ${request.kind} ${request.job_id} failed`, err);
    return { kind: "failed" };
  }
  if (response.ok) {
    await response.body?.cancel();
    return { kind: "done" };
  }
  if (response.status === 503) {
    await response.body?.cancel();
    const retryAfter = Number(response.headers.get("retry-after"));
    return { kind: "busy", retryAfterSeconds: retryAfter > 0 ? retryAfter : BUSY_DELAY_SECONDS };
  }
  if (response.status >= 400 && response.status < 500) {
    const said = await refusalReason(response);
    return {
      kind: "refused",
      reason: said ?? `the extractor refused the job (HTTP ${response.status})`,
    };
  }
  await response.body?.cancel();
  return { kind: "failed" };
}

/** The extractor's own words for a refusal ({error}), bounded: it ends up in the job's error. */
async function refusalReason(response: Response): Promise<string | null> {
  const text = await response.text().catch(() => "");
  try {
    const said = (JSON.parse(text.slice(0, 4096)) as { error?: unknown }).error;
    return typeof said === "string" && said.length > 0 ? said.slice(0, 300) : null;
  } catch {
    return null;
  }
}

async function waitBusy(env: Env, message: JobMessage, delaySeconds: number) {
  await setRunState(env, message, "queued");
  await env.JOBS_QUEUE.send(message, { delaySeconds });
}

function refuse(env: Env, message: JobMessage, reason: string) {
  return failJob(env, message, "ExtractionFailed", reason);
}

/** Detached: the consumer has acked; this call decides what happens to the job next. */
async function dispatchDetached(
  env: Env,
  extractor: ExtractorClient,
  message: JobMessage,
  request: ExtractRequest,
) {
  try {
    const outcome = await callExtractor(extractor, request);
    if (outcome.kind === "done") return;
    if (outcome.kind === "busy") return await waitBusy(env, message, outcome.retryAfterSeconds);
    if (outcome.kind === "refused") return await refuse(env, message, outcome.reason);
    await retryDetached(env, message);
  } catch (err) {
    console.error(`dispatch of ${message.kind} ${message.id} failed`, err);
    await retryDetached(env, message).catch((again) =>
      console.error(`could not put ${message.kind} ${message.id} back in the queue`, again),
    );
  }
}

async function retryDetached(env: Env, message: JobMessage) {
  const failures = (message.failures ?? 0) + 1;
  if (failures > MAX_DISPATCH_FAILURES) {
    return failJob(
      env,
      message,
      "ExtractionFailed",
      "the job could not be processed after repeated attempts",
    );
  }
  await setRunState(env, message, "queued");
  await env.JOBS_QUEUE.send(
    { ...message, failures },
    { delaySeconds: retryDelaySeconds(failures) },
  );
}

export async function consumeJobs(batch: MessageBatch<JobMessage>, env: Env) {
  const db = drizzle(env.DB);
  const extractor = extractorFor(env);
  const detached = dispatchesDetached(env);
  for (const message of batch.messages) {
    try {
      const request = await buildRequest(db, env, message.body);
      if (!request) {
        message.ack();
        continue;
      }
      if (detached) {
        message.ack();
        waitUntil(dispatchDetached(env, extractor, message.body, request));
        continue;
      }
      const outcome = await callExtractor(extractor, request);
      if (outcome.kind === "busy") {
        await waitBusy(env, message.body, outcome.retryAfterSeconds);
      } else if (outcome.kind === "refused") {
        await refuse(env, message.body, outcome.reason);
      } else if (outcome.kind === "failed") {
        await setRunState(env, message.body, "queued");
        message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
        continue;
      }
      message.ack();
    } catch (err) {
      console.error(`dispatch of ${message.body.kind} ${message.body.id} failed`, err);
      await setRunState(env, message.body, "queued").catch(() => {});
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
