// Every status a job or a demo job is written with is written here: its first (create, in the
// create batch) and every change after, each a conditional statement that succeeds only from
// an allowed state. The statements' SQL is the job store's (`statusWrites` in
// edge/jobs/store/status.ts), and this is the one module that calls them: routes, queue consumers, the cron and the rest of
// edge/jobs/ call these transitions and write no status of their own (`grep -rn statusWrites
// edge/` finds the store and this file only).
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
// or hung past its lease) only by completing it (edge/jobs/attempts.ts).
import { COMPLETED, EXPIRED, PROCESSING, QUEUED } from "../../schema/job-status.ts";
import { edgeConfig } from "../config.ts";
import { attemptStateRow } from "./store/attempts.ts";
import { type JobRef, type NewDemoJobRow, type NewJobRow, statusWrites } from "./store/status.ts";

export { isFinalStatus } from "../../schema/job-status.ts";
export { type JobRef, type NewJobRow, tableOf, UNSETTLED_SQL } from "./store/status.ts";

/** Dispatches a job may take (lost attempts and failed calls; busy answers are refunded). */
export const MAX_ATTEMPTS = 10;

/** How long an attempt lives without a renewal (JOB_LEASE_SECONDS, parsed in edge/config.ts). */
export function leaseSecondsFor(env: Env): number {
  return edgeConfig(env).jobLeaseSeconds;
}

export interface AttemptState {
  status: string;
  attemptId: string | null;
  leaseExpiresAt: string | null;
  attempts: number;
  settled: boolean;
}

export async function readAttemptState(env: Env, job: JobRef): Promise<AttemptState | null> {
  const row = await attemptStateRow(env.DB, job);
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
  return statusWrites.insertJob(db, row, QUEUED, maxActive);
}

/** create → queued: a demo job's row (edge/jobs/demo.ts). */
export function createdDemoJob(env: Env, row: NewDemoJobRow): Promise<void> {
  return statusWrites.insertDemoJob(env.DB, row, QUEUED);
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
  return statusWrites.startAttempt(env.DB, job, {
    attemptId,
    leaseExpiresAt: iso(now + leaseSeconds * 1000),
    now: iso(now),
    maxAttempts: MAX_ATTEMPTS,
    processing: PROCESSING,
    queued: QUEUED,
  });
}

/** processing → processing: the job's current attempt is alive for another lease. */
export function renewLease(
  env: Env,
  job: JobRef,
  attemptId: string,
  leaseSeconds: number,
  now = Date.now(),
): Promise<boolean> {
  return statusWrites.renewLease(
    env.DB,
    job,
    attemptId,
    iso(now + leaseSeconds * 1000),
    PROCESSING,
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
  return statusWrites.releaseAttempt(env.DB, job, attemptId, refund, {
    queued: QUEUED,
    processing: PROCESSING,
  });
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
  return statusWrites.settled(db, job, status);
}

/** completed → expired, once its files are gone (edge/maintenance.ts). */
export function expire(env: Env, job: JobRef): Promise<boolean> {
  return statusWrites.change(env.DB, job, COMPLETED, EXPIRED);
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
