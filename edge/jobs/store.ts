// The jobs table group's storage: every SQL statement on `jobs`, `demo_jobs`, a job's
// `settlements` row and its `frames` as settlement writes them, in prepared SQL, each taking
// the D1Database (or a session of it) it runs on (decision 0200). The two parallel tables are
// chosen here, by tableOf(kind), once. The statements that write a status are in
// `statusWrites`, and edge/jobs/lifecycle.ts is the one module that calls them.
import { and, asc, count, desc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import {
  type DemoJobRow,
  demoJobs,
  type FrameRow,
  frames,
  idempotencyKeys,
  type JobRow,
  jobs,
} from "../../schema/db.ts";
import { COMPLETED, UNSETTLED_STATUSES } from "../../schema/job-status.ts";
import type { JobKind } from "../../schema/messages.ts";
import type { Db } from "../context.ts";
import { CHARGED_SQL } from "../credits.ts";
import { type D1Reader, foldedRows, rowDecoder } from "../storage/prepared-select.ts";

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

// ── Reads of a job's attempt, its settlement and its parts ─────────────────────────────────

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

/** The status of an account's job (a demo job's, for kind "demo"), or null when none. */
export async function jobStatus(db: D1Database, job: JobRef): Promise<string | null> {
  const row = await db
    .prepare(`SELECT status FROM ${tableOf(job.kind)} WHERE id = ?1`)
    .bind(job.id)
    .first<{ status: string }>();
  return row?.status ?? null;
}

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

/** An account's job's account and stored options. */
export function jobAccountAndOptions(db: D1Database, jobId: string) {
  return db
    .prepare("SELECT account_id, options FROM jobs WHERE id = ?1")
    .bind(jobId)
    .first<{ account_id: string | null; options: string | null }>();
}

/** A result's job: its stored options and its account's plan (none for a demo), or null. */
export async function resultJob(
  db: D1Database,
  job: JobRef,
): Promise<{ options: string | null; plan: string | null } | null> {
  if (job.kind === "demo") {
    const row = await db.prepare("SELECT id FROM demo_jobs WHERE id = ?1").bind(job.id).first();
    return row ? { options: null, plan: null } : null;
  }
  return db
    .prepare(
      `SELECT jobs.options, accounts.plan FROM jobs
       LEFT JOIN accounts ON accounts.id = jobs.account_id WHERE jobs.id = ?1`,
    )
    .bind(job.id)
    .first<{ options: string; plan: string | null }>();
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

/** The address hash and creation time of a demo job (its daily allowance's day). */
export function demoJobOrigin(db: D1Database, id: string) {
  return db
    .prepare("SELECT ip_hash, created_at FROM demo_jobs WHERE id = ?1")
    .bind(id)
    .first<{ ip_hash: string; created_at: string }>();
}

// ── Creation and settlement batches ────────────────────────────────────────────────────────

/**
 * What rides with a new job's row in its create batch, each written only if the row was: the
 * credit hold (its ledger entry and the account's reserved credits) and the Idempotency-Key.
 */
export function jobCreationStatements(
  db: D1Database,
  job: {
    jobId: string;
    accountId: string;
    hold: number;
    idempotency?: { key: string; requestHash: string };
  },
): D1PreparedStatement[] {
  const exists = "EXISTS (SELECT 1 FROM jobs WHERE id = ?1)";
  const statements = [
    db
      .prepare(
        `INSERT INTO credit_ledger (id, account_id, job_id, kind, reserved_delta, note)
         SELECT 'reserve:' || ?1, ?2, ?1, 'reserve', ?3, 'held until the job finishes'
         WHERE ${exists}`,
      )
      .bind(job.jobId, job.accountId, job.hold),
    db
      .prepare(
        `UPDATE accounts SET reserved_credits = reserved_credits + ?3 WHERE id = ?2 AND ${exists}`,
      )
      .bind(job.jobId, job.accountId, job.hold),
  ];
  if (job.idempotency) {
    statements.push(
      db
        .prepare(
          `INSERT INTO idempotency_keys (account_id, key, request_hash, job_id)
           SELECT ?2, ?3, ?4, ?1 WHERE ${exists}`,
        )
        .bind(job.jobId, job.accountId, job.idempotency.key, job.idempotency.requestHash),
    );
  }
  return statements;
}

/** The settlements guard row: its primary key (job_id) makes settling first-come. */
export function settlementRow(db: D1Database, jobId: string, attemptId: string) {
  return db
    .prepare("INSERT INTO settlements (job_id, attempt_id) VALUES (?1, ?2)")
    .bind(jobId, attemptId);
}

/** The result's frames, from its JSON, in one statement. */
export function insertFrames(db: D1Database, jobId: string, framesJson: string) {
  return db
    .prepare(
      `INSERT OR REPLACE INTO frames (job_id, idx, timestamp, pts, status, r2_key, error,
         scene_score, moved_to, moved_reason, caption, thumb_key, score, score_parts, text)
       SELECT ?1, value ->> '$.index', value ->> '$.timestamp', value ->> '$.pts',
              value ->> '$.status', value ->> '$.key', value ->> '$.error',
              value ->> '$.scene_score', value ->> '$.moved_to', value ->> '$.moved_reason',
              value ->> '$.caption', value ->> '$.thumb_key',
              value ->> '$.score', value -> '$.score_parts', value -> '$.text'
       FROM json_each(?2)`,
    )
    .bind(jobId, framesJson);
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
         animated = ?18, lease_expires_at = NULL
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
    );
}

function countsOf(f: FinalFields) {
  return f.countFrames ? `${FRAMES_COUNT}, frames_failed = ${FRAMES_FAILED}` : "NULL";
}

function commonOf(jobId: string, f: FinalFields) {
  return [jobId, f.durationSeconds, f.width, f.height, f.error, f.completedAt, f.expiresAt];
}

// ── The cron's looks, one table (kind) at a time ──────────────────────────────────────────

/** Jobs in `status` whose expires_at has passed, soonest first. */
export async function pastExpiry(
  db: D1Database,
  kind: JobKind,
  status: string,
  due: string,
  limit: number,
): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT id FROM ${tableOf(kind)} WHERE status = ?2 AND expires_at <= ?1
       ORDER BY expires_at LIMIT ${limit}`,
    )
    .bind(due, status)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/** A failed job whose files are deleted: nothing is left to expire. */
export async function clearExpiry(db: D1Database, job: JobRef): Promise<void> {
  await db
    .prepare(`UPDATE ${tableOf(job.kind)} SET expires_at = NULL WHERE id = ?1`)
    .bind(job.id)
    .run();
}

/** Unsettled jobs created at or before `before`. */
export async function unsettledSince(
  db: D1Database,
  kind: JobKind,
  before: string,
  limit: number,
): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT id FROM ${tableOf(kind)} WHERE status IN (${UNSETTLED_SQL}) AND created_at <= ?1 LIMIT ${limit}`,
    )
    .bind(before)
    .all<{ id: string }>();
  return results.map((row) => row.id);
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

// ── The read path (GET /v1/jobs, /v1/demo), on the binding or a D1 session ─────────────────

/** Decodes the job's columns of the read's statement as a drizzle select of the job would. */
const JOB_ROWS = rowDecoder(jobs);
const JOB_COLUMNS = Object.values(getTableColumns(jobs))
  .map((column) => `"jobs"."${column.name}"`)
  .join(", ");
const FRAMES_OF_THE_JOB = foldedRows(frames, `"frames"."job_id" = "jobs"."id"`, "index");

/**
 * An account's job and its frames in one statement: the frames travel folded in a column of
 * the job's row (a batch of two statements cost a measurable share of a read on local D1).
 * A missing job, or another account's, is `row: undefined`.
 */
export async function jobWithFrames(
  d1: D1Reader,
  id: string,
  accountId: string,
): Promise<{ row: JobRow | undefined; frameList: FrameRow[] }> {
  const result = await d1
    .prepare(
      `select ${JOB_COLUMNS}, ${FRAMES_OF_THE_JOB.sql} as "folded_frames" ` +
        `from "jobs" where "jobs"."id" = ? and "jobs"."account_id" = ?`,
    )
    .bind(id, accountId)
    .all();
  const [answer] = result.results as { folded_frames?: unknown }[];
  const [row] = JOB_ROWS(result);
  return { row, frameList: row ? FRAMES_OF_THE_JOB.rows(answer?.folded_frames) : [] };
}

/** An account's job's row, or undefined. */
export async function accountJobRow(db: Db, id: string, accountId: string) {
  const [row] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), eq(jobs.accountId, accountId)));
  return row as JobRow | undefined;
}

/** A job's row by its id alone (the edge's own reads: its attempt's request). */
export async function jobRowById(db: Db, id: string) {
  const [row] = await db.select().from(jobs).where(eq(jobs.id, id));
  return row as JobRow | undefined;
}

export async function demoJobRow(db: Db, id: string) {
  const [row] = await db.select().from(demoJobs).where(eq(demoJobs.id, id));
  return row as DemoJobRow | undefined;
}

export function frameRowsOf(db: Db, jobId: string): Promise<FrameRow[]> {
  return db.select().from(frames).where(eq(frames.jobId, jobId)).orderBy(asc(frames.index));
}

/**
 * A page of an account's jobs, newest first, and how many there are. `visibleStatus` filters
 * by the status a job reads as: a completed job past its expiry reads "expired" before the cron
 * marks it, so it is not listed as completed either.
 */
export async function jobPage(
  db: Db,
  accountId: string,
  query: { limit: number; skip: number; status?: string },
  now: string,
): Promise<{ total: number; rows: JobRow[] }> {
  const where = and(
    eq(jobs.accountId, accountId),
    query.status ? eq(jobs.status, query.status) : undefined,
    query.status === COMPLETED
      ? sql`(${jobs.expiresAt} IS NULL OR ${jobs.expiresAt} > ${now})`
      : undefined,
  );
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: count() }).from(jobs).where(where),
    db
      .select()
      .from(jobs)
      .where(where)
      // rowid breaks ties between jobs created in the same millisecond.
      .orderBy(desc(jobs.createdAt), sql`rowid DESC`)
      .limit(query.limit)
      .offset(query.skip),
  ]);
  return { total, rows };
}

// ── Creation's reads ───────────────────────────────────────────────────────────────────────

/** The job an Idempotency-Key of this account created, and the hash of its request. */
export async function idempotentJob(db: Db, accountId: string, key: string) {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
  return row;
}

/** How many of the account's jobs are unsettled. */
export async function activeJobCount(db: Db, accountId: string): Promise<number> {
  const [{ active }] = await db
    .select({ active: sql<number>`count(*)` })
    .from(jobs)
    .where(and(eq(jobs.accountId, accountId), inArray(jobs.status, [...UNSETTLED_STATUSES])));
  return active;
}
