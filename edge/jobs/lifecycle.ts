// Every status a job or a demo job is written with is written here: its first (create, in the
// create batch) and every change after, each a conditional statement that succeeds only from
// an allowed state. Routes, queue consumers, the cron and the rest of edge/jobs/ call these
// and write no status of their own (`grep -rnE "SET status|INSERT INTO (demo_)?jobs" edge/`
// finds them here only).
//
//                 startAttempt                      settle (result or edge failure)
//   create ──▶ queued ─────────────▶ processing ──────────────────────▶ completed ──▶ expired
//                ▲  │                  │  │  ▲ renewLease (same attempt)   │          expire
//                │  │                  │  └──┘                           ▼
//                │  │   releaseAttempt │ (busy, refused call,          failed
//                │  └──────────────────┤  lost lease found by a           ▲ ▲
//                └─────────────────────┘  backstop or the cron)           │ │
//                   any unsettled state ── failUnsettled ─────────────────┘ │
//                   processing ── stopIfUnaffordable (the probed span ──────┘
//                                 costs more than hold + free credits)
//
// An attempt is one dispatch of the job: the edge picks its id, records it with a lease, and
// the extractor renews that lease while it works. Another attempt may start only once the job
// is queued again, or once the running attempt's lease has expired (the extractor died or
// hung): that start replaces the job's attempt_id, so the old attempt's next renewal is
// refused (409) and it stops. Settlement is first-come: the `settlements` row decides. Only
// the current attempt with a live lease may settle the job by failing; any other (replaced,
// or hung past its lease) only by completing it (edge/routes/internal/handlers.ts).
import {
  COMPLETED,
  EXPIRED,
  PROCESSING,
  QUEUED,
  UNSETTLED_STATUSES,
} from "../../schema/job-status.ts";
import type { JobKind } from "../../schema/messages.ts";
import { edgeConfig } from "../config.ts";

export { isFinalStatus } from "../../schema/job-status.ts";

export interface JobRef {
  kind: JobKind;
  id: string;
}

/** Dispatches a job may take (lost attempts and failed calls; busy answers are refunded). */
export const MAX_ATTEMPTS = 10;

/** How long an attempt lives without a renewal (JOB_LEASE_SECONDS, parsed in edge/config.ts). */
export function leaseSecondsFor(env: Env): number {
  return edgeConfig(env).jobLeaseSeconds;
}

export function tableOf(kind: JobKind): "jobs" | "demo_jobs" {
  return kind === "demo" ? "demo_jobs" : "jobs";
}

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

/** The statuses a job is not settled in, as an SQL list built from schema/job-status.ts. */
export const UNSETTLED_SQL = UNSETTLED_STATUSES.map((s) => `'${s}'`).join(", ");

const NOT_SETTLED = "NOT EXISTS (SELECT 1 FROM settlements WHERE job_id = ?1)";

export interface AttemptState {
  status: string;
  attemptId: string | null;
  leaseExpiresAt: string | null;
  attempts: number;
  settled: boolean;
}

export async function readAttemptState(env: Env, job: JobRef): Promise<AttemptState | null> {
  const row = await env.DB.prepare(
    `SELECT status, attempt_id, lease_expires_at, attempts,
            EXISTS (SELECT 1 FROM settlements WHERE job_id = ?1) AS settled
     FROM ${tableOf(job.kind)} WHERE id = ?1`,
  )
    .bind(job.id)
    .first<{
      status: string;
      attempt_id: string | null;
      lease_expires_at: string | null;
      attempts: number;
      settled: number;
    }>();
  if (!row) return null;
  return {
    status: row.status,
    attemptId: row.attempt_id,
    leaseExpiresAt: row.lease_expires_at,
    attempts: row.attempts,
    settled: row.settled === 1,
  };
}

/** An attempt is running and has renewed its lease in time. */
export function leaseIsLive(state: AttemptState, now: number): boolean {
  return (
    !state.settled &&
    state.status === PROCESSING &&
    state.leaseExpiresAt !== null &&
    Date.parse(state.leaseExpiresAt) > now
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * create → queued: the job's row, for the create batch (edge/jobs/create.ts). It is written only
 * while the account runs fewer than `maxActive` unsettled jobs and has the hold
 * (`creditsReserved`) free, so concurrent creates cannot pass either limit.
 */
export function createdJob(db: D1Database, row: NewJobRow, maxActive: number) {
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
      QUEUED,
      row.requestId,
    );
}

/** create → queued: a demo job's row (edge/jobs/demo.ts). */
export async function createdDemoJob(
  env: Env,
  row: { id: string; ipHash: string; url: string; sourceUrl: string; platform: string },
): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO demo_jobs (id, ip_hash, status, url, source_url, platform)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)`,
  )
    .bind(row.id, row.ipHash, QUEUED, row.url, row.sourceUrl, row.platform)
    .run();
}

async function changed(statement: D1PreparedStatement): Promise<boolean> {
  const { meta } = await statement.run();
  return meta.changes === 1;
}

/**
 * queued → processing, or processing → processing as a new attempt once the running one's
 * lease has expired. Refused when the job is settled, another attempt's lease is live, or the
 * job has used MAX_ATTEMPTS.
 */
export function startAttempt(
  env: Env,
  job: JobRef,
  attemptId: string,
  leaseSeconds: number,
  now = Date.now(),
): Promise<boolean> {
  return changed(
    env.DB.prepare(
      `UPDATE ${tableOf(job.kind)} SET status = ?2, attempt_id = ?3, lease_expires_at = ?4,
         attempts = attempts + 1, started_at = coalesce(started_at, ?5)
       WHERE id = ?1 AND attempts < ?6 AND ${NOT_SETTLED}
         AND (status = ?7 OR (status = ?2 AND (lease_expires_at IS NULL OR lease_expires_at <= ?5)))`,
    ).bind(
      job.id,
      PROCESSING,
      attemptId,
      iso(now + leaseSeconds * 1000),
      iso(now),
      MAX_ATTEMPTS,
      QUEUED,
    ),
  );
}

/** processing → processing: the job's current attempt is alive for another lease. */
export function renewLease(
  env: Env,
  job: JobRef,
  attemptId: string,
  leaseSeconds: number,
  now = Date.now(),
): Promise<boolean> {
  return changed(
    env.DB.prepare(
      `UPDATE ${tableOf(job.kind)} SET lease_expires_at = ?3
       WHERE id = ?1 AND status = ?4 AND attempt_id = ?2 AND ${NOT_SETTLED}`,
    ).bind(job.id, attemptId, iso(now + leaseSeconds * 1000), PROCESSING),
  );
}

/**
 * processing → queued for this attempt only (the extractor was busy, or the call failed).
 * `refund` gives the attempt back: a busy extractor is no failure of the job.
 */
export function releaseAttempt(
  env: Env,
  job: JobRef,
  attemptId: string,
  refund: boolean,
): Promise<boolean> {
  return changed(
    env.DB.prepare(
      `UPDATE ${tableOf(job.kind)} SET status = ?3, lease_expires_at = NULL,
         attempts = max(0, attempts - ?4)
       WHERE id = ?1 AND status = ?5 AND attempt_id = ?2 AND ${NOT_SETTLED}`,
    ).bind(job.id, attemptId, QUEUED, refund ? 1 : 0, PROCESSING),
  );
}

/**
 * queued | processing → completed | failed: the last statement of the settlement batch
 * (edge/jobs/settle.ts, run by edge/jobs/settlement.ts), after the `settlements` row that makes
 * settling first-come. It changes the job only while it is unsettled.
 */
export function settledStatus(
  db: D1Database,
  job: JobRef,
  status: "completed" | "failed",
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE ${tableOf(job.kind)} SET status = ?2 WHERE id = ?1 AND status IN (${UNSETTLED_SQL})`,
    )
    .bind(job.id, status);
}

/** completed → expired, once its files are gone (edge/maintenance.ts). */
export function expire(env: Env, job: JobRef): Promise<boolean> {
  return changed(
    env.DB.prepare(
      `UPDATE ${tableOf(job.kind)} SET status = ?2 WHERE id = ?1 AND status = ?3`,
    ).bind(job.id, EXPIRED, COMPLETED),
  );
}

/** A completed job past its expiry reads as expired even before the cron run marks it. */
export function visibleStatus(
  row: { status: string; expiresAt: string | null },
  now = Date.now(),
): string {
  return row.status === COMPLETED && row.expiresAt !== null && Date.parse(row.expiresAt) <= now
    ? EXPIRED
    : row.status;
}
