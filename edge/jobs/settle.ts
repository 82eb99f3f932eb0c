// A job's final state in one D1 batch (one transaction): the settlements guard row, its
// frames, its credits, the job row's final fields, and last its status, by the settle
// transition of edge/jobs/lifecycle.ts. Either all of it is written or none of it; the job row
// changes only while it is unsettled.
import { UNSETTLED_STATUSES } from "../../schema/job-status.ts";
import type { ExtractErrorName, ExtractResult, JobOptions } from "../../schema/messages.ts";
import type { Plan } from "../../schema/plans.ts";
import {
  CHARGED_SQL,
  isUnaffordable,
  isUniqueViolation,
  settlementStatements,
} from "../credits.ts";
import { settledStatus } from "./lifecycle.ts";
import { jobNotice, resolutionNote } from "./notice.ts";

const DEMO_RETENTION_DAYS = 1;
const DAY_MS = 86_400_000;

export interface FinalError {
  name: ExtractErrorName | "InsufficientBalance";
  message: string;
  userMessage: string;
}

/** What a job ends with: the extractor's result, or one the edge writes (failures, refusals). */
export type Settlement = Omit<ExtractResult, "error"> & { error: FinalError | null };

export interface SettlingJob {
  table: "jobs" | "demo_jobs";
  accountId: string | null;
  options: JobOptions | null;
  plan: Plan;
}

export type SettleOutcome = "settled" | "already-settled" | "unaffordable";

/**
 * Writes the job's final state and charges `cost`. "already-settled" when another settlement
 * won (the guard's primary key refused this one), "unaffordable" when the hold and the free
 * credits could not cover the cost; in both cases nothing was written.
 */
export async function writeSettlement(
  env: Env,
  job: SettlingJob,
  result: Settlement,
  cost: number,
): Promise<SettleOutcome> {
  const statements = [
    env.DB.prepare("INSERT INTO settlements (job_id, attempt_id) VALUES (?1, ?2)").bind(
      result.job_id,
      result.attempt_id,
    ),
    ...(job.accountId ? settlementStatements(env.DB, job.accountId, result.job_id, cost) : []),
    ...(result.status === "completed" ? [insertFrames(env.DB, result)] : []),
    updateJob(env.DB, job, result),
    settledStatus(
      env.DB,
      { kind: job.table === "demo_jobs" ? "demo" : "job", id: result.job_id },
      result.status,
    ),
  ];
  try {
    await env.DB.batch(statements);
    return "settled";
  } catch (err) {
    if (isUniqueViolation(err)) return "already-settled";
    if (isUnaffordable(err)) return "unaffordable";
    throw err;
  }
}

function insertFrames(db: D1Database, result: Settlement) {
  return db
    .prepare(
      `INSERT OR REPLACE INTO frames (job_id, idx, timestamp, pts, status, r2_key, error,
         scene_score, moved_to, moved_reason, caption)
       SELECT ?1, value ->> '$.index', value ->> '$.timestamp', value ->> '$.pts',
              value ->> '$.status', value ->> '$.key', value ->> '$.error',
              value ->> '$.scene_score', value ->> '$.moved_to', value ->> '$.moved_reason',
              value ->> '$.caption'
       FROM json_each(?2)`,
    )
    .bind(result.job_id, JSON.stringify(result.frames));
}

// Counted from the rows just written, so frames_count always agrees with the frames a job has.
const FRAMES_COUNT = "(SELECT count(*) FROM frames WHERE job_id = ?1)";
const FRAMES_FAILED = "(SELECT count(*) FROM frames WHERE job_id = ?1 AND status != 'ok')";
const WHILE_UNSETTLED = `status IN (${UNSETTLED_STATUSES.map((s) => `'${s}'`).join(", ")})`;

function updateJob(db: D1Database, job: SettlingJob, result: Settlement) {
  const now = Date.now();
  const completed = result.status === "completed";
  const retentionDays =
    job.table === "demo_jobs" ? DEMO_RETENTION_DAYS : job.plan.limits.retention_days;
  // A failed job keeps no files for users, but whatever an attempt left (partial frames, the
  // result) is deleted when this passes, as for a completed job.
  const expiresAt = new Date(now + retentionDays * DAY_MS).toISOString();
  const common = [
    result.job_id,
    result.duration_seconds,
    result.width,
    result.height,
    result.error ? JSON.stringify(result.error) : null,
    new Date(now).toISOString(),
    expiresAt,
  ];
  const counts = completed ? `${FRAMES_COUNT}, frames_failed = ${FRAMES_FAILED}` : "NULL";
  if (job.table === "demo_jobs") {
    return db
      .prepare(
        `UPDATE demo_jobs SET duration_seconds = ?2, width = ?3, height = ?4,
           error = ?5, completed_at = ?6, expires_at = ?7, frames_count = ${counts},
           lease_expires_at = NULL
         WHERE id = ?1 AND ${WHILE_UNSETTLED}`,
      )
      .bind(...common);
  }
  const note = resolutionNote({
    requested: result.requested_resolution,
    delivered: result.delivered_resolution,
    width: result.width,
    height: result.height,
    maxWidth: Math.min(
      job.options?.max_width ?? job.plan.limits.max_width,
      job.plan.limits.max_width,
    ),
    extractorNote: result.resolution_note,
  });
  const notice = jobNotice({
    id: result.job_id,
    status: result.status,
    expiresAt,
    framesCount: completed ? result.frames.length : null,
    zipped: result.zip !== null,
    resolutionNote: note,
    errorMessage: result.error?.userMessage ?? null,
    captionsNote: result.captions_note ?? null,
  });
  return db
    .prepare(
      `UPDATE jobs SET duration_seconds = ?2, width = ?3, height = ?4, error = ?5,
         completed_at = ?6, expires_at = ?7, frames_count = ${counts},
         processed_seconds = ?8, credits_charged = ${CHARGED_SQL.replace("?", "?1")},
         zip_key = ?9, zip_bytes = ?10,
         requested_resolution = coalesce(?11, requested_resolution), delivered_resolution = ?12,
         resolution_note = ?13, notice = ?14, video = ?15, captions = ?16, storyboard = ?17,
         lease_expires_at = NULL
       WHERE id = ?1 AND ${WHILE_UNSETTLED}`,
    )
    .bind(
      ...common,
      result.processed_seconds,
      result.zip?.key ?? null,
      result.zip?.bytes ?? null,
      result.requested_resolution,
      result.delivered_resolution,
      note,
      notice,
      result.video ? JSON.stringify(result.video) : null,
      storedCaptions(result),
      completed && result.storyboard ? JSON.stringify(result.storyboard) : null,
    );
}

/** jobs.captions: the file when there is one, else why a job that asked has none. */
function storedCaptions(result: Settlement): string | null {
  if (result.status === "completed" && result.captions) return JSON.stringify(result.captions);
  if (result.captions_note) return JSON.stringify({ note: result.captions_note });
  return null;
}
