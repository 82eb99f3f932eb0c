// The job store's job rows: an account's job as creation, the read path (GET /v1/jobs, the
// dashboard) and settlement read it, and what rides with a new row in its create batch
// (decision 0200). Its status is written by status.ts only.
import { and, count, desc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { type FrameRow, idempotencyKeys, type JobRow, jobs } from "../../../schema/db.ts";
import { COMPLETED, UNSETTLED_STATUSES } from "../../../schema/job-status.ts";
import type { Db } from "../../context.ts";
import { type D1Reader, rowDecoder } from "../../storage/prepared-select.ts";
import { FRAMES_OF_THE_JOB } from "./frames.ts";
import { type JobRef, tableOf } from "./status.ts";

/** The status of an account's job (a demo job's, for kind "demo"), or null when none. */
export async function jobStatus(db: D1Database, job: JobRef): Promise<string | null> {
  const row = await db
    .prepare(`SELECT status FROM ${tableOf(job.kind)} WHERE id = ?1`)
    .bind(job.id)
    .first<{ status: string }>();
  return row?.status ?? null;
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

// ── Creation's batch ───────────────────────────────────────────────────────────────────────

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

// ── The read path (GET /v1/jobs), on the binding or a D1 session ──────────────────────────

/** Decodes the job's columns of the read's statement as a drizzle select of the job would. */
const JOB_ROWS = rowDecoder(jobs);
const JOB_COLUMNS = Object.values(getTableColumns(jobs))
  .map((column) => `"jobs"."${column.name}"`)
  .join(", ");

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
