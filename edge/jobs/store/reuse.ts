// The job store's reuse (decision 0350): the keys a job's source report writes, the account's
// earlier job a repeat may be served from, the marks a reused job's settlement writes, and
// which jobs still hold the files under a job's R2 prefix.
import { COMPLETED } from "../../../schema/job-status.ts";

/** What the attempt's source report found: the job's source and options keys. */
export async function recordReuseKeys(
  db: D1Database,
  jobId: string,
  keys: { sourceKey: string; optionsKey: string },
): Promise<void> {
  await db
    .prepare("UPDATE jobs SET source_key = ?2, options_key = ?3 WHERE id = ?1")
    .bind(jobId, keys.sourceKey, keys.optionsKey)
    .run();
}

/** A completed job of the account whose frames a repeat may take, and where they lie. */
export interface ReusableJob {
  id: string;
  /** The job under whose prefix the files lie (the job itself, or the one it reused). */
  files_job: string;
  /** The attempt whose result settled `files_job`: its result.json is under that prefix. */
  files_attempt: string;
}

/**
 * The account's newest completed job with these keys, other than `jobId`, that stays unexpired
 * past `liveUntil`, with the attempt whose stored result holds its frames.
 */
export function reusableJob(
  db: D1Database,
  find: {
    accountId: string;
    optionsKey: string;
    sourceKey: string;
    jobId: string;
    liveUntil: string;
  },
): Promise<ReusableJob | null> {
  return db
    .prepare(
      `SELECT jobs.id, COALESCE(jobs.files_from, jobs.id) AS files_job,
              settlements.attempt_id AS files_attempt
       FROM jobs JOIN settlements ON settlements.job_id = COALESCE(jobs.files_from, jobs.id)
       WHERE jobs.account_id = ?1 AND jobs.options_key = ?2 AND jobs.source_key = ?3
         AND jobs.id <> ?4 AND jobs.status = ?6 AND jobs.expires_at > ?5
       ORDER BY jobs.completed_at DESC LIMIT 1`,
    )
    .bind(find.accountId, find.optionsKey, find.sourceKey, find.jobId, find.liveUntil, COMPLETED)
    .first<ReusableJob>();
}

/** For the reused job's settlement batch: which job it reused, and whose prefix its files are. */
export function reuseMarks(db: D1Database, jobId: string, reusedFrom: string, filesFrom: string) {
  return db
    .prepare("UPDATE jobs SET reused_from = ?2, files_from = ?3 WHERE id = ?1")
    .bind(jobId, reusedFrom, filesFrom);
}

/**
 * Whether a completed job still serves the files under `filesJob`'s prefix at `now`: the job
 * itself or one that reused it, unexpired.
 */
export async function filesHeld(db: D1Database, filesJob: string, now: string): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT 1 AS held FROM jobs WHERE (id = ?1 OR files_from = ?1) AND status = ?3
         AND expires_at > ?2 LIMIT 1`,
    )
    .bind(filesJob, now, COMPLETED)
    .first<{ held: number }>();
  return row !== null;
}

/** The job under whose prefix this job's files lie, when not its own. */
export async function filesFromOf(db: D1Database, jobId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT files_from FROM jobs WHERE id = ?1")
    .bind(jobId)
    .first<{ files_from: string | null }>();
  return row?.files_from ?? null;
}
