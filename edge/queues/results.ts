// The results-queue consumer: finishes a job exactly once. The `settlements` row (primary key
// job_id) is written in the same D1 batch as the job's final state and its frames, so a
// result delivered twice, or a second attempt's result, finds the job settled and only
// cleans up its own files. Credits are settled by ledger entry id, idempotent on its own.
import { creditsFor } from "../../schema/billing.ts";
import type {
  ExtractErrorName,
  ExtractResult,
  JobMessage,
  JobOptions,
  ResultMessage,
  WebhookMessage,
} from "../../schema/messages.ts";
import { isPlanName, PLANS } from "../../schema/plans.ts";
import { CHARGED_SQL, isUniqueViolation, settlementStatements } from "../credits.ts";

const DEMO_RETENTION_DAYS = 1;
const DAY_MS = 86_400_000;

const USER_MESSAGES: Record<ExtractErrorName, string> = {
  NoVideoFound: "We couldn't find a video at that link.",
  PrivateContent: "This video is private, deleted or needs a login, so we can't read it.",
  DownloadFailed: "We couldn't download the video. Please try again later.",
  VideoTooLong: "This video is longer than your plan allows.",
  TooManyFrames: "This job would produce more frames than your plan allows.",
  ExtractionFailed: "We couldn't extract frames from this video.",
};

export async function consumeResults(batch: MessageBatch<ResultMessage>, env: Env) {
  for (const message of batch.messages) {
    try {
      const object = await env.FILES.get(message.body.result_key);
      if (object) await settleResult(env, (await object.json()) as ExtractResult);
      message.ack();
    } catch (err) {
      console.error(`settling ${message.body.result_key} failed`, err);
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}

/** Ends a job as failed without a result from the extractor (refused, or out of retries). */
export async function failJob(env: Env, job: JobMessage, name: ExtractErrorName, message: string) {
  await settleResult(env, {
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
    error: { name, message, userMessage: USER_MESSAGES[name] },
  });
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

function deleteAttemptFiles(env: Env, result: ExtractResult) {
  return deletePrefix(env, `${result.kind}/${result.job_id}/${result.attempt_id}/`);
}

async function enqueueWebhook(env: Env, result: ExtractResult) {
  const event: WebhookMessage = {
    event_id: `msg_${result.job_id}_${result.status}`,
    type: result.status === "completed" ? "job.completed" : "job.failed",
    job_id: result.job_id,
  };
  await env.WEBHOOKS_QUEUE.send(event);
}

function insertFrames(db: D1Database, result: ExtractResult) {
  return db
    .prepare(
      `INSERT OR REPLACE INTO frames (job_id, idx, timestamp, pts, status, r2_key, error)
       SELECT ?1, value ->> '$.index', value ->> '$.timestamp', value ->> '$.pts',
              value ->> '$.status', value ->> '$.key', value ->> '$.error'
       FROM json_each(?2)`,
    )
    .bind(result.job_id, JSON.stringify(result.frames));
}

function finalFields(result: ExtractResult, retentionDays: number) {
  const now = Date.now();
  const completed = result.status === "completed";
  const failedFrames = result.frames.filter((f) => f.status !== "ok").length;
  return {
    status: result.status,
    durationSeconds: result.duration_seconds,
    framesCount: completed ? result.frames.length : null,
    framesFailed: failedFrames,
    width: result.width,
    height: result.height,
    error: result.error
      ? {
          ...result.error,
          userMessage: result.error.userMessage || USER_MESSAGES[result.error.name],
        }
      : null,
    completedAt: new Date(now).toISOString(),
    // A failed job keeps no files for users, but whatever an attempt left (partial frames, the
    // result) is deleted when this passes, as for a completed job.
    expiresAt: new Date(now + retentionDays * DAY_MS).toISOString(),
  };
}

export async function settleResult(env: Env, result: ExtractResult) {
  const table = result.kind === "demo" ? "demo_jobs" : "jobs";
  const columns =
    result.kind === "demo"
      ? "NULL AS account_id, NULL AS options, NULL AS webhook_url"
      : "account_id, options, webhook_url";
  const row = await env.DB.prepare(`SELECT id, ${columns} FROM ${table} WHERE id = ?1`)
    .bind(result.job_id)
    .first<{
      id: string;
      account_id: string | null;
      options: string | null;
      webhook_url: string | null;
    }>();
  if (!row) return;

  const previous = await env.DB.prepare("SELECT attempt_id FROM settlements WHERE job_id = ?1")
    .bind(result.job_id)
    .first<{ attempt_id: string }>();
  if (previous) {
    if (previous.attempt_id !== result.attempt_id) {
      // Another attempt already finished this job: this one's files are orphans.
      await deleteAttemptFiles(env, result);
    } else if (row.webhook_url) {
      // A redelivery of the settled result: the send after the batch may be what failed.
      // Receivers drop the duplicate by its stable webhook-id.
      await enqueueWebhook(env, result);
    }
    return;
  }

  const cost =
    row.account_id && row.options ? costOf(result, JSON.parse(row.options) as JobOptions) : 0;
  const settled = await writeFinalState(env, table, result, row.account_id, cost);
  if (!settled) {
    await deleteAttemptFiles(env, result);
    return;
  }
  if (row.webhook_url) await enqueueWebhook(env, result);
}

function costOf(result: ExtractResult, options: JobOptions): number {
  if (result.status !== "completed") return 0;
  const okFrames = result.frames.filter((f) => f.status === "ok").length;
  return creditsFor(options.mode, result.processed_seconds ?? 0, okFrames);
}

async function retentionDaysOf(env: Env, accountId: string | null): Promise<number> {
  if (!accountId) return DEMO_RETENTION_DAYS;
  const account = await env.DB.prepare("SELECT plan FROM accounts WHERE id = ?1")
    .bind(accountId)
    .first<{ plan: string }>();
  return PLANS[account && isPlanName(account.plan) ? account.plan : "free"].limits.retention_days;
}

/**
 * One D1 batch, one transaction: the guard row, the frames, the job's final state and its
 * credits. False when another settlement won (the guard's primary key refused this one).
 */
async function writeFinalState(
  env: Env,
  table: "jobs" | "demo_jobs",
  result: ExtractResult,
  accountId: string | null,
  cost: number,
): Promise<boolean> {
  const f = finalFields(result, await retentionDaysOf(env, accountId));
  const common = [
    f.status,
    f.durationSeconds,
    f.framesCount,
    f.framesFailed,
    f.width,
    f.height,
    f.error ? JSON.stringify(f.error) : null,
    f.completedAt,
    f.expiresAt,
  ];
  const update =
    table === "demo_jobs"
      ? env.DB.prepare(
          `UPDATE demo_jobs SET status = ?1, duration_seconds = ?2, frames_count = ?3, frames_failed = ?4,
             width = ?5, height = ?6, error = ?7, completed_at = ?8, expires_at = ?9 WHERE id = ?10`,
        ).bind(...common, result.job_id)
      : env.DB.prepare(
          `UPDATE jobs SET status = ?1, duration_seconds = ?2, frames_count = ?3, frames_failed = ?4,
             width = ?5, height = ?6, error = ?7, completed_at = ?8, expires_at = ?9,
             processed_seconds = ?10, credits_charged = ${CHARGED_SQL.replace("?", "?11")},
             zip_key = ?12, zip_bytes = ?13,
             requested_resolution = coalesce(?14, requested_resolution), delivered_resolution = ?15,
             resolution_note = ?16, notice = ?17 WHERE id = ?18`,
        ).bind(
          ...common,
          result.processed_seconds,
          result.job_id,
          result.zip?.key ?? null,
          result.zip?.bytes ?? null,
          result.requested_resolution,
          result.delivered_resolution,
          result.resolution_note,
          noticeFor(result, f.expiresAt),
          result.job_id,
        );
  try {
    await env.DB.batch([
      env.DB.prepare("INSERT INTO settlements (job_id, attempt_id) VALUES (?1, ?2)").bind(
        result.job_id,
        result.attempt_id,
      ),
      ...(result.status === "completed" ? [insertFrames(env.DB, result)] : []),
      ...(accountId ? settlementStatements(env.DB, accountId, result.job_id, cost) : []),
      update,
    ]);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

function noticeFor(result: ExtractResult, expiresAt: string | null): string {
  if (result.status === "failed") return result.error?.userMessage ?? "The job failed.";
  const parts = [`Completed. Files are available until ${expiresAt}.`];
  if (result.zip && result.frames.length > 300)
    parts.push("Jobs over 300 frames are always zipped.");
  if (result.resolution_note) parts.push(result.resolution_note);
  return parts.join(" ");
}
