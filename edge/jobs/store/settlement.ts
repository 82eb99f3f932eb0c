// The job store's settlement: what settling a job reads of it, the settlements guard row that
// makes settling first-come, and the final fields written in the settlement batch (decision
// 0200). The final status is status.ts's (statusWrites.settled), the batch's last statement.
import { CHARGED_SQL } from "../../storage/ledger.ts";
import { type JobRef, UNSETTLED_SQL } from "./status.ts";

/** What settling a job needs of it: its account, options, webhook and plan (null for a demo). */
export interface SettlingRow {
  account_id: string | null;
  options: string | null;
  webhook_url: string | null;
  plan: string | null;
}

export function settlingRow(db: D1Database, job: JobRef) {
  const query =
    job.kind === "demo"
      ? "SELECT NULL AS account_id, NULL AS options, NULL AS webhook_url, NULL AS plan FROM demo_jobs WHERE id = ?1"
      : `SELECT jobs.account_id, jobs.options, jobs.webhook_url, accounts.plan
         FROM jobs LEFT JOIN accounts ON accounts.id = jobs.account_id WHERE jobs.id = ?1`;
  return db.prepare(query).bind(job.id).first<SettlingRow>();
}

/** The attempt whose settlement won, or null while the job is unsettled. */
export async function settledAttempt(db: D1Database, jobId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT attempt_id FROM settlements WHERE job_id = ?1")
    .bind(jobId)
    .first<{ attempt_id: string }>();
  return row?.attempt_id ?? null;
}

/** The settlements guard row: its primary key (job_id) makes settling first-come. */
export function settlementRow(db: D1Database, jobId: string, attemptId: string) {
  return db
    .prepare("INSERT INTO settlements (job_id, attempt_id) VALUES (?1, ?2)")
    .bind(jobId, attemptId);
}

// Counted from the rows just written, so frames_count always agrees with the frames a job has.
const FRAMES_COUNT = "(SELECT count(*) FROM frames WHERE job_id = ?1)";
const FRAMES_FAILED = "(SELECT count(*) FROM frames WHERE job_id = ?1 AND status != 'ok')";
const WHILE_UNSETTLED = `status IN (${UNSETTLED_SQL})`;

/** The final fields both tables share. */
export interface FinalFields {
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  /** The error, as JSON. */
  error: string | null;
  completedAt: string;
  expiresAt: string;
  /** Count the frames just written (a completed job) or leave the counts NULL. */
  countFrames: boolean;
  /** The moving preview delivered (schema/messages.ts ResultAnimatedSchema), as JSON. */
  animated: string | null;
}

/** An account's job's final fields beyond the shared ones. */
export interface FinalJobFields extends FinalFields {
  processedSeconds: number | null;
  zipKey: string | null;
  zipBytes: number | null;
  requestedResolution: number | null;
  deliveredResolution: number | null;
  resolutionNote: string | null;
  notice: string;
  video: string | null;
  captions: string | null;
  storyboard: string | null;
  /** What a token budget chose, measured (schema/messages.ts ResultBudgetSchema), as JSON. */
  budget: string | null;
}

/** A demo job's final fields, while it is unsettled (a statement of the settlement batch). */
export function finalDemoJob(db: D1Database, jobId: string, f: FinalFields) {
  // demo_jobs.animated holds what the demo asked ({options}); the delivered preview joins it.
  return db
    .prepare(
      `UPDATE demo_jobs SET duration_seconds = ?2, width = ?3, height = ?4,
         error = ?5, completed_at = ?6, expires_at = ?7, frames_count = ${countsOf(f)},
         lease_expires_at = NULL,
         animated = CASE WHEN ?8 IS NULL THEN animated
                         ELSE json_patch(coalesce(animated, '{}'), ?8) END
       WHERE id = ?1 AND ${WHILE_UNSETTLED}`,
    )
    .bind(...commonOf(jobId, f), f.animated);
}

/** A job's final fields and its charge (the settle entry's), while it is unsettled. */
export function finalJob(db: D1Database, jobId: string, f: FinalJobFields) {
  return db
    .prepare(
      `UPDATE jobs SET duration_seconds = ?2, width = ?3, height = ?4, error = ?5,
         completed_at = ?6, expires_at = ?7, frames_count = ${countsOf(f)},
         processed_seconds = ?8, credits_charged = ${CHARGED_SQL.replace("?", "?1")},
         zip_key = ?9, zip_bytes = ?10,
         requested_resolution = coalesce(?11, requested_resolution), delivered_resolution = ?12,
         resolution_note = ?13, notice = ?14, video = ?15, captions = ?16, storyboard = ?17,
         animated = ?18, budget = ?19, lease_expires_at = NULL
       WHERE id = ?1 AND ${WHILE_UNSETTLED}`,
    )
    .bind(
      ...commonOf(jobId, f),
      f.processedSeconds,
      f.zipKey,
      f.zipBytes,
      f.requestedResolution,
      f.deliveredResolution,
      f.resolutionNote,
      f.notice,
      f.video,
      f.captions,
      f.storyboard,
      f.animated,
      f.budget,
    );
}

function countsOf(f: FinalFields) {
  return f.countFrames ? `${FRAMES_COUNT}, frames_failed = ${FRAMES_FAILED}` : "NULL";
}

function commonOf(jobId: string, f: FinalFields) {
  return [jobId, f.durationSeconds, f.width, f.height, f.error, f.completedAt, f.expiresAt];
}
