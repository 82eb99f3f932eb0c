// Reads of an account's usage (issue 36, decision 0251): this period's totals and newest ledger
// entries (GET /v1/usage, edge/usage.ts), this period's jobs by day, and the credit ledger folded
// to one row per job (its hold, then its charge or release, become one row; entries of no job
// stay one row each). Prepared SQL, each taking the D1 binding or the request's session of it.
// Read-only: the ledger is written by edge/storage/ledger.ts, edge/jobs/store/ and
// schema/ledger.ts.
import { COMPLETED, EXPIRED, FAILED } from "../../schema/job-status.ts";
import type { D1Reader } from "./prepared-select.ts";

/** This period's jobs as GET /v1/usage counts them (spec §2 Usage, this_period). */
export interface PeriodTotals {
  jobs_created: number;
  /** An expired job completed: its files are gone, not its place in the period's count. */
  jobs_completed: number;
  jobs_failed: number;
  credits_charged: number;
  frames_delivered: number;
}

/** The account's jobs created from `periodStart` (inclusive), totalled. */
export async function periodTotals(
  d1: D1Reader,
  accountId: string,
  periodStart: string,
): Promise<PeriodTotals> {
  const row = await d1
    .prepare(
      `SELECT count(*) AS jobs_created,
              coalesce(sum(status IN (?3, ?4)), 0) AS jobs_completed,
              coalesce(sum(status = ?5), 0) AS jobs_failed,
              coalesce(sum(credits_charged), 0) AS credits_charged,
              coalesce(sum(frames_count - frames_failed), 0) AS frames_delivered
       FROM jobs WHERE account_id = ?1 AND created_at >= ?2`,
    )
    .bind(accountId, periodStart, COMPLETED, EXPIRED, FAILED)
    .first<PeriodTotals>();
  return (
    row ?? {
      jobs_created: 0,
      jobs_completed: 0,
      jobs_failed: 0,
      credits_charged: 0,
      frames_delivered: 0,
    }
  );
}

/** One credit ledger entry, as GET /v1/usage lists it. */
export interface RecentLedgerEntry {
  id: string;
  kind: string;
  job_id: string | null;
  plan_delta: number;
  pack_delta: number;
  reserved_delta: number;
  note: string | null;
  created_at: string;
}

/** The account's newest `limit` ledger entries, newest first. */
export async function recentLedgerEntries(
  d1: D1Reader,
  accountId: string,
  limit: number,
): Promise<RecentLedgerEntry[]> {
  const { results } = await d1
    .prepare(
      `SELECT id, kind, job_id, plan_delta, pack_delta, reserved_delta, note, created_at
       FROM credit_ledger WHERE account_id = ?1
       ORDER BY created_at DESC, id DESC LIMIT ?2`,
    )
    .bind(accountId, limit)
    .all<RecentLedgerEntry>();
  return results;
}

/** One UTC day of the period: the jobs created that day and what they cost and delivered. */
export interface UsageDay {
  day: string;
  jobs: number;
  credits: number;
  frames: number;
}

/**
 * Jobs created from `from` (inclusive) by their UTC day, with the credits charged and the frames
 * delivered: the same definitions as /v1/usage's this_period (edge/usage.ts), so the days sum to
 * its figures. Days without a job are absent.
 */
export async function usageByDay(
  db: D1Database,
  accountId: string,
  from: string,
): Promise<UsageDay[]> {
  const { results } = await db
    .prepare(
      `SELECT substr(created_at, 1, 10) AS day, count(*) AS jobs,
              coalesce(sum(credits_charged), 0) AS credits,
              coalesce(sum(frames_count - frames_failed), 0) AS frames
       FROM jobs WHERE account_id = ?1 AND created_at >= ?2
       GROUP BY day ORDER BY day`,
    )
    .bind(accountId, from)
    .all<UsageDay>();
  return results;
}

/** A row of the folded ledger: a job's entries summed, or one entry of no job. */
export interface FoldedLedgerRow {
  /** The job's id, or null for an entry of no job (a grant, a renewal, a pack…). */
  job_id: string | null;
  /** The entry's kind for an entry of no job; for a job, where it stands: charge, release or reserve (still held). */
  kind: string;
  note: string | null;
  /** Credits the job held while it ran (0 for an entry of no job). */
  held: number;
  plan_delta: number;
  pack_delta: number;
  reserved_delta: number;
  /** How many ledger entries the row folds. */
  entries: number;
  first_at: string;
  last_at: string;
  /** The job's link and status, when the job is still known. */
  job_url: string | null;
  job_status: string | null;
}

// Entries up to rowid ?2 only, so a page read, or an export streamed page by page, sees one
// ledger even while new entries arrive.
const FOLDED = `
  SELECT g.*, j.url AS job_url, j.status AS job_status FROM (
    SELECT job_id,
           CASE WHEN job_id IS NULL THEN min(kind)
                WHEN max(kind = 'charge') THEN 'charge'
                WHEN max(kind = 'release') THEN 'release'
                ELSE 'reserve' END AS kind,
           CASE WHEN job_id IS NULL THEN min(note) END AS note,
           sum(max(reserved_delta, 0)) AS held,
           sum(plan_delta) AS plan_delta, sum(pack_delta) AS pack_delta,
           sum(reserved_delta) AS reserved_delta, count(*) AS entries,
           min(created_at) AS first_at, max(created_at) AS last_at, max(rowid) AS last_row
    FROM credit_ledger WHERE account_id = ?1 AND rowid <= ?2
    GROUP BY CASE WHEN job_id IS NULL THEN 'entry:' || id ELSE 'job:' || job_id END
  ) g LEFT JOIN jobs j ON j.id = g.job_id AND j.account_id = ?1
  ORDER BY g.last_at DESC, g.last_row DESC LIMIT ?3 OFFSET ?4`;

/** The newest ledger entry's rowid: the bound of one consistent read of the ledger. */
export async function ledgerBound(db: D1Database, accountId: string): Promise<number> {
  const row = await db
    .prepare("SELECT coalesce(max(rowid), 0) AS bound FROM credit_ledger WHERE account_id = ?1")
    .bind(accountId)
    .first<{ bound: number }>();
  return row?.bound ?? 0;
}

/** A page of the folded ledger, newest first, of the entries up to `bound`. */
export async function foldedLedgerPage(
  db: D1Database,
  accountId: string,
  page: { bound: number; limit: number; offset: number },
): Promise<FoldedLedgerRow[]> {
  const { results } = await db
    .prepare(FOLDED)
    .bind(accountId, page.bound, page.limit, page.offset)
    .all<FoldedLedgerRow & { last_row: number }>();
  return results.map(({ last_row: _lastRow, ...row }) => row);
}

/** How many rows the folded ledger has (of the entries up to `bound`). */
export async function foldedLedgerSize(
  db: D1Database,
  accountId: string,
  bound: number,
): Promise<number> {
  const row = await db
    .prepare(
      `SELECT count(DISTINCT CASE WHEN job_id IS NULL THEN 'entry:' || id ELSE 'job:' || job_id END)
         AS size FROM credit_ledger WHERE account_id = ?1 AND rowid <= ?2`,
    )
    .bind(accountId, bound)
    .first<{ size: number }>();
  return row?.size ?? 0;
}

/** One ledger entry as exported, unfolded. */
export interface LedgerEntryRow {
  id: string;
  job_id: string | null;
  kind: string;
  note: string | null;
  plan_delta: number;
  pack_delta: number;
  reserved_delta: number;
  created_at: string;
  job_url: string | null;
  row: number;
}

/** Entries with rowid below `before` (newest first), for an export that pages by rowid. */
export async function ledgerEntriesBefore(
  db: D1Database,
  accountId: string,
  before: number,
  limit: number,
): Promise<LedgerEntryRow[]> {
  const { results } = await db
    .prepare(
      `SELECT l.id, l.job_id, l.kind, l.note, l.plan_delta, l.pack_delta, l.reserved_delta,
              l.created_at, j.url AS job_url, l.rowid AS row
       FROM credit_ledger l LEFT JOIN jobs j ON j.id = l.job_id AND j.account_id = ?1
       WHERE l.account_id = ?1 AND l.rowid < ?2 ORDER BY l.rowid DESC LIMIT ?3`,
    )
    .bind(accountId, before, limit)
    .all<LedgerEntryRow>();
  return results;
}
