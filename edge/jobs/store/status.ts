// The one home of a job's status writes (edge/jobs/lifecycle.ts is the one module that calls
// them): the two parallel tables `jobs` and `demo_jobs` are chosen here, by tableOf(kind), once,
// and every statement that writes a `status` is in `statusWrites`. Prepared SQL, each statement
// taking the D1Database it runs on (decision 0200). The rest of the job store is beside this
// file: jobs.ts (a job's rows), attempts.ts, settlement.ts, frames.ts, demo.ts, expiry.ts.
import { UNSETTLED_STATUSES } from "../../../schema/job-status.ts";
import type { JobKind } from "../../../schema/messages.ts";

export interface JobRef {
  kind: JobKind;
  id: string;
}

export function tableOf(kind: JobKind): "jobs" | "demo_jobs" {
  return kind === "demo" ? "demo_jobs" : "jobs";
}

/** The statuses a job is not settled in, as an SQL list built from schema/job-status.ts. */
export const UNSETTLED_SQL = UNSETTLED_STATUSES.map((s) => `'${s}'`).join(", ");

const NOT_SETTLED = "NOT EXISTS (SELECT 1 FROM settlements WHERE job_id = ?1)";

/** A new job's row, as edge/jobs/create.ts records it. */
export interface NewJobRow {
  id: string;
  accountId: string;
  url: string;
  sourceUrl: string;
  platform: string;
  /** The normalised JobOptions, as JSON. */
  options: string;
  webhookUrl: string | null;
  creditsReserved: number;
  requestedResolution: number;
  notice: string;
  requestId: string | null;
}

export interface NewDemoJobRow {
  id: string;
  ipHash: string;
  url: string;
  sourceUrl: string;
  platform: string;
  /** What the demo asks of a moving preview: { options } (edge/jobs/demo.ts). */
  animated?: { options: unknown };
}

async function changed(statement: D1PreparedStatement): Promise<boolean> {
  const { meta } = await statement.run();
  return meta.changes === 1;
}

/**
 * Every statement that writes a job's status, for edge/jobs/lifecycle.ts only (its comment says
 * which transition each is). Each is conditional: it changes the row only from the states the
 * transition allows.
 */
export const statusWrites = {
  /** The job's row, written only while the account has room and credits (create batch). */
  insertJob(db: D1Database, row: NewJobRow, status: string, maxActive: number) {
    return db
      .prepare(
        `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, webhook_url,
           credits_reserved, requested_resolution, notice, request_id)
         SELECT ?1, ?2, ?12, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?13
         WHERE (SELECT count(*) FROM jobs WHERE account_id = ?2
                  AND status IN (${UNSETTLED_SQL})) < ?11
           AND (SELECT plan_credits + pack_credits - reserved_credits FROM accounts
                WHERE id = ?2) >= ?8`,
      )
      .bind(
        row.id,
        row.accountId,
        row.url,
        row.sourceUrl,
        row.platform,
        row.options,
        row.webhookUrl,
        row.creditsReserved,
        row.requestedResolution,
        row.notice,
        maxActive,
        status,
        row.requestId,
      );
  },

  async insertDemoJob(db: D1Database, row: NewDemoJobRow, status: string): Promise<void> {
    await db
      .prepare(
        `INSERT INTO demo_jobs (id, ip_hash, status, url, source_url, platform, animated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
      )
      .bind(
        row.id,
        row.ipHash,
        status,
        row.url,
        row.sourceUrl,
        row.platform,
        row.animated ? JSON.stringify(row.animated) : null,
      )
      .run();
  },

  /** `processing` with a new attempt, from `queued` or from a `processing` whose lease ran out. */
  startAttempt(
    db: D1Database,
    job: JobRef,
    a: {
      attemptId: string;
      leaseExpiresAt: string;
      now: string;
      maxAttempts: number;
      processing: string;
      queued: string;
    },
  ): Promise<boolean> {
    return changed(
      db
        .prepare(
          `UPDATE ${tableOf(job.kind)} SET status = ?2, attempt_id = ?3, lease_expires_at = ?4,
             attempts = attempts + 1, started_at = coalesce(started_at, ?5)
           WHERE id = ?1 AND attempts < ?6 AND ${NOT_SETTLED}
             AND (status = ?7 OR (status = ?2 AND (lease_expires_at IS NULL OR lease_expires_at <= ?5)))`,
        )
        .bind(job.id, a.processing, a.attemptId, a.leaseExpiresAt, a.now, a.maxAttempts, a.queued),
    );
  },

  /** The same attempt's lease, moved on while it is the job's current one. */
  renewLease(
    db: D1Database,
    job: JobRef,
    attemptId: string,
    leaseExpiresAt: string,
    processing: string,
  ): Promise<boolean> {
    return changed(
      db
        .prepare(
          `UPDATE ${tableOf(job.kind)} SET lease_expires_at = ?3
           WHERE id = ?1 AND status = ?4 AND attempt_id = ?2 AND ${NOT_SETTLED}`,
        )
        .bind(job.id, attemptId, leaseExpiresAt, processing),
    );
  },

  /** Back to `queued` for this attempt only; `refund` gives the attempt back. */
  releaseAttempt(
    db: D1Database,
    job: JobRef,
    attemptId: string,
    refund: boolean,
    s: { queued: string; processing: string },
  ): Promise<boolean> {
    return changed(
      db
        .prepare(
          `UPDATE ${tableOf(job.kind)} SET status = ?3, lease_expires_at = NULL,
             attempts = max(0, attempts - ?4)
           WHERE id = ?1 AND status = ?5 AND attempt_id = ?2 AND ${NOT_SETTLED}`,
        )
        .bind(job.id, attemptId, s.queued, refund ? 1 : 0, s.processing),
    );
  },

  /** The final status, the last statement of the settlement batch, while unsettled. */
  settled(db: D1Database, job: JobRef, status: string): D1PreparedStatement {
    return db
      .prepare(
        `UPDATE ${tableOf(job.kind)} SET status = ?2 WHERE id = ?1 AND status IN (${UNSETTLED_SQL})`,
      )
      .bind(job.id, status);
  },

  /** `from` → `to` (completed → expired once the files are gone). */
  change(db: D1Database, job: JobRef, from: string, to: string): Promise<boolean> {
    return changed(
      db
        .prepare(`UPDATE ${tableOf(job.kind)} SET status = ?2 WHERE id = ?1 AND status = ?3`)
        .bind(job.id, to, from),
    );
  },
};
