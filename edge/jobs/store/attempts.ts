// The job store's attempts and leases: a job's attempt state, who its extractor instance is
// chosen by, and the cron's looks for run-out leases and jobs left queued (decision 0200).
// Writing an attempt's status is status.ts's (statusWrites), called by lifecycle.ts only.
import type { JobKind } from "../../../schema/messages.ts";
import { type JobRef, tableOf } from "./status.ts";

export interface AttemptStateRow {
  status: string;
  attempt_id: string | null;
  lease_expires_at: string | null;
  attempts: number;
  settled: number;
}

export function attemptStateRow(db: D1Database, job: JobRef) {
  return db
    .prepare(
      `SELECT status, attempt_id, lease_expires_at, attempts,
              EXISTS (SELECT 1 FROM settlements WHERE job_id = ?1) AS settled
       FROM ${tableOf(job.kind)} WHERE id = ?1`,
    )
    .bind(job.id)
    .first<AttemptStateRow>();
}

/** Who an attempt's extractor instance is chosen by: `account:<id>` or `demo:<ip hash>`. */
export async function tenantOf(db: D1Database, job: JobRef): Promise<string | null> {
  const row =
    job.kind === "demo"
      ? await db
          .prepare("SELECT 'demo:' || ip_hash AS tenant FROM demo_jobs WHERE id = ?1")
          .bind(job.id)
          .first<{ tenant: string }>()
      : await db
          .prepare("SELECT 'account:' || account_id AS tenant FROM jobs WHERE id = ?1")
          .bind(job.id)
          .first<{ tenant: string }>();
  return row?.tenant ?? null;
}

export interface AttemptRow {
  id: string;
  attempt_id: string | null;
}

/** Unsettled jobs in `processing` whose lease has run out at `now`. */
export async function leaseRunOut(
  db: D1Database,
  kind: JobKind,
  processing: string,
  now: string,
  limit: number,
): Promise<AttemptRow[]> {
  const table = tableOf(kind);
  const { results } = await db
    .prepare(
      `SELECT id, attempt_id FROM ${table}
       WHERE status = ?1 AND (lease_expires_at IS NULL OR lease_expires_at <= ?2)
         AND NOT EXISTS (SELECT 1 FROM settlements WHERE job_id = ${table}.id)
       LIMIT ${limit}`,
    )
    .bind(processing, now)
    .all<AttemptRow>();
  return results;
}

/** Unsettled jobs still `queued` that were created at or before `before`, oldest first. */
export async function queuedSince(
  db: D1Database,
  kind: JobKind,
  queued: string,
  before: string,
  limit: number,
): Promise<AttemptRow[]> {
  const table = tableOf(kind);
  const { results } = await db
    .prepare(
      `SELECT id, attempt_id FROM ${table}
       WHERE status = ?1 AND created_at <= ?2
         AND NOT EXISTS (SELECT 1 FROM settlements WHERE job_id = ${table}.id)
       ORDER BY created_at LIMIT ${limit}`,
    )
    .bind(queued, before)
    .all<AttemptRow>();
  return results;
}
