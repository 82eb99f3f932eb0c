// Every status change of a job and of a demo job happens here, each as one conditional UPDATE
// that succeeds only from an allowed state; routes, queue consumers and the cron call these
// and hold no status logic of their own.
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
import type { ExtractErrorName, JobKind, JobMessage } from "../../schema/messages.ts";
import { edgeConfig } from "../config.ts";
import { holdAndFreeCover } from "../credits.ts";
import { failJob, failUnaffordable, settleResult } from "../queues/results.ts";
import { leastCreditsOnceProbed } from "./options.ts";
import { storedJobOptions } from "./read.ts";

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

/** completed → expired, once its files are gone (edge/maintenance.ts). */
export function expire(env: Env, job: JobRef): Promise<boolean> {
  return changed(
    env.DB.prepare(
      `UPDATE ${tableOf(job.kind)} SET status = ?2 WHERE id = ?1 AND status = ?3`,
    ).bind(job.id, EXPIRED, COMPLETED),
  );
}

/**
 * queued | processing → completed | failed: the settlement batch (edge/jobs/settle.ts through
 * edge/queues/results.ts), which writes the status only while the job is unsettled and wakes
 * the job's waiters once it is written.
 */
export const settle = settleResult;

/**
 * processing → failed with InsufficientBalance, uncharged, when the span the probe found
 * (`processedSeconds`, sent by the running attempt with a lease renewal) already costs more
 * than the job's hold and the account's free credits: the job could never be charged, so its
 * attempt stops now instead of decoding to its end. True when the job was stopped.
 */
export async function stopIfUnaffordable(
  env: Env,
  job: JobRef,
  processedSeconds: number,
): Promise<boolean> {
  if (job.kind !== "job") return false;
  const row = await env.DB.prepare("SELECT account_id, options FROM jobs WHERE id = ?1")
    .bind(job.id)
    .first<{ account_id: string | null; options: string | null }>();
  if (!row?.account_id || !row.options) return false;
  const least = leastCreditsOnceProbed(storedJobOptions(job.id, row.options), processedSeconds);
  if (least <= 0 || (await holdAndFreeCover(env.DB, row.account_id, job.id, least))) return false;
  await failUnaffordable(env, job, least);
  return true;
}

/** Any unsettled state → failed, without a result from the extractor. */
export function failUnsettled(
  env: Env,
  job: JobRef | JobMessage,
  name: ExtractErrorName,
  message: string,
): Promise<void> {
  return failJob(env, { kind: job.kind, id: job.id }, name, message);
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
