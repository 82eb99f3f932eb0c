// The job store's dashboard list (issue 35, decision 0270): an account's jobs under a tab (the
// status as people see it) and matching a search, how many each tab holds, the first thumbnail
// of each listed job and a job's thumbnails, and the request that created a job. drizzle's
// builder with SQL conditions for the tab and the search (LIKE with its wildcards escaped); the
// thumbnails' first-of-each-job look is prepared SQL. edge/routes/account/data.ts turns these
// rows into what the pages show.
import { and, desc, eq, isNotNull, or, type SQL, sql } from "drizzle-orm";
import { frames, type JobRow, jobs } from "../../../schema/db.ts";
import type { Db } from "../../context.ts";

/** The jobs list's tabs: a status as people see it (an expired job was completed). */
export const JOB_TABS = ["all", "running", "completed", "failed", "expired"] as const;
export type JobTab = (typeof JOB_TABS)[number];

export interface JobFilter {
  tab?: JobTab;
  /** A link or part of one, or a job id or its beginning. */
  search?: string;
}

/** LIKE's wildcards taken literally. */
function likePattern(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The condition of a search: the link contains it, or the job id starts with it. */
function searchCondition(search: string | undefined): SQL | undefined {
  const text = search?.trim();
  if (!text) return undefined;
  const inUrl = sql`${jobs.url} LIKE ${`%${likePattern(text)}%`} ESCAPE '\\'`;
  return /^[0-9a-f-]{4,36}$/i.test(text)
    ? or(inUrl, sql`${jobs.id} LIKE ${`${likePattern(text.toLowerCase())}%`} ESCAPE '\\'`)
    : inUrl;
}

/** Which tab a job row is under, as SQL (the status the API shows: lifecycle.visibleStatus). */
function tabOf(now: string): SQL<string> {
  return sql<string>`CASE
    WHEN ${jobs.status} IN ('queued', 'processing') THEN 'running'
    WHEN ${jobs.status} = 'completed' AND ${jobs.expiresAt} IS NOT NULL AND ${jobs.expiresAt} <= ${now}
      THEN 'expired'
    ELSE ${jobs.status} END`;
}

/** How many of the account's jobs (matching the search) each tab holds. */
export async function jobTabCounts(
  db: Db,
  accountId: string,
  search: string | undefined,
): Promise<Record<JobTab, number>> {
  const tab = tabOf(new Date().toISOString());
  const rows = await db
    .select({ tab, total: sql<number>`count(*)` })
    .from(jobs)
    .where(and(eq(jobs.accountId, accountId), searchCondition(search)))
    .groupBy(tab);
  const counts: Record<JobTab, number> = {
    all: 0,
    running: 0,
    completed: 0,
    failed: 0,
    expired: 0,
  };
  for (const row of rows) {
    if (row.tab in counts) counts[row.tab as JobTab] += row.total;
    counts.all += row.total;
  }
  return counts;
}

/** A page of the account's jobs, newest first, under a tab and matching a search. */
export async function jobListPage(
  db: Db,
  accountId: string,
  limit: number,
  offset: number,
  filter: JobFilter = {},
): Promise<{ total: number; rows: JobRow[] }> {
  const tab = filter.tab ?? "all";
  const where = and(
    eq(jobs.accountId, accountId),
    tab === "all" ? undefined : sql`${tabOf(new Date().toISOString())} = ${tab}`,
    searchCondition(filter.search),
  );
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: sql<number>`count(*)` }).from(jobs).where(where),
    db
      .select()
      .from(jobs)
      .where(where)
      .orderBy(desc(jobs.createdAt), sql`rowid DESC`)
      .limit(limit)
      .offset(offset),
  ]);
  return { total, rows };
}

/** The thumbnail key of each job's first good frame that has one, by job id. */
export async function firstThumbKeys(
  d1: D1Database,
  jobIds: string[],
): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  if (jobIds.length === 0) return keys;
  // SQLite returns the other columns of the row that holds min(idx).
  const { results } = await d1
    .prepare(
      `SELECT job_id, thumb_key, min(idx) AS idx FROM frames
       WHERE status = 'ok' AND thumb_key IS NOT NULL AND job_id IN (${jobIds.map(() => "?").join(", ")})
       GROUP BY job_id`,
    )
    .bind(...jobIds)
    .all<{ job_id: string; thumb_key: string }>();
  for (const frame of results) keys.set(frame.job_id, frame.thumb_key);
  return keys;
}

/** A job's frames that have a thumbnail: their index and the thumbnail's key. */
export function thumbKeysOf(
  db: Db,
  jobId: string,
): Promise<{ index: number; key: string | null }[]> {
  return db
    .select({ index: frames.index, key: frames.thumbKey })
    .from(frames)
    .where(and(eq(frames.jobId, jobId), isNotNull(frames.thumbKey)));
}

/** X-Request-Id of the request that created the account's job (null for older jobs). */
export async function jobRequestId(db: Db, accountId: string, jobId: string) {
  const [row] = await db
    .select({ requestId: jobs.requestId })
    .from(jobs)
    .where(and(eq(jobs.id, jobId), eq(jobs.accountId, accountId)));
  return row?.requestId ?? null;
}
