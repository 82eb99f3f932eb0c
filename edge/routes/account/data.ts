// What the dashboard reads and changes, apart from how it is shown.
import { and, desc, eq, isNotNull, or, type SQL, sql } from "drizzle-orm";
import type { Context } from "hono";
import { type AccountRow, accounts, frames, jobs } from "../../../schema/db.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv, Db } from "../../context.ts";
import { fileLinker } from "../../files.ts";
import { visibleStatus } from "../../jobs/lifecycle.ts";
import { baseUrl } from "../../request.ts";
import { filesAreLive } from "../../serialize.ts";
import { optionsLabel } from "./job-options.ts";

/** The account as it is now (the session's copy may be older than a purchase or a job). */
export async function liveAccount(db: Db, accountId: string): Promise<AccountRow> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return account;
}

export interface JobListRow {
  id: string;
  status: string;
  url: string;
  platform: string;
  /** What the job asked for, as one line ("count 6 · jpg · 720p"). */
  optionsLabel: string;
  framesCount: number | null;
  framesFailed: number;
  creditsCharged: number | null;
  createdAt: string;
  /** Signed URL of the first good frame's thumbnail while the job's files live. */
  thumbnailUrl: string | null;
}

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

/**
 * The account's jobs, newest first, under a tab and matching a search, each with the signed
 * URL of its first good frame's thumbnail. Only thumbnails: a job whose frames predate them
 * shows none rather than its full-size frame (decision 0240).
 */
export async function jobsWithThumbnails(
  c: Context<AppEnv>,
  accountId: string,
  limit: number,
  offset: number,
  filter: JobFilter = {},
): Promise<{ total: number; rows: JobListRow[] }> {
  const db = c.get("db");
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
  const live = rows.filter((row) => filesAreLive(row));
  const { secrets } = edgeConfig(c.env);
  const firstThumbs = new Map<string, string>();
  if (live.length > 0) {
    // SQLite returns the other columns of the row that holds min(idx).
    const { results } = await c.env.DB.prepare(
      `SELECT job_id, thumb_key, min(idx) AS idx FROM frames
       WHERE status = 'ok' AND thumb_key IS NOT NULL AND job_id IN (${live.map(() => "?").join(", ")})
       GROUP BY job_id`,
    )
      .bind(...live.map((row) => row.id))
      .all<{ job_id: string; thumb_key: string }>();
    for (const frame of results) firstThumbs.set(frame.job_id, frame.thumb_key);
  }
  const listed = await Promise.all(
    rows.map(async (row): Promise<JobListRow> => {
      const key = firstThumbs.get(row.id);
      const thumbnailUrl =
        key && row.expiresAt
          ? await fileLinker(secrets.fileUrlSecret, baseUrl(c), row.expiresAt).url(key)
          : null;
      return {
        id: row.id,
        status: visibleStatus(row),
        url: row.url,
        platform: row.platform,
        optionsLabel: optionsLabel((row.options ?? {}) as Record<string, unknown>),
        framesCount: row.framesCount,
        framesFailed: row.framesFailed,
        creditsCharged: row.creditsCharged,
        createdAt: row.createdAt,
        thumbnailUrl,
      };
    }),
  );
  return { total, rows: listed };
}

/**
 * Signed URLs of a job's frame thumbnails by frame index (none once its files are gone, and
 * none for frames made before thumbnails were).
 */
export async function frameThumbnails(
  c: Context<AppEnv>,
  job: { id: string; status: string; expires_at: string | null },
): Promise<Map<number, string>> {
  const thumbs = new Map<number, string>();
  if (!job.expires_at || !filesAreLive({ status: job.status, expiresAt: job.expires_at })) {
    return thumbs;
  }
  const rows = await c
    .get("db")
    .select({ index: frames.index, key: frames.thumbKey })
    .from(frames)
    .where(and(eq(frames.jobId, job.id), isNotNull(frames.thumbKey)));
  const linker = fileLinker(edgeConfig(c.env).secrets.fileUrlSecret, baseUrl(c), job.expires_at);
  await Promise.all(
    rows.map(async (row) => {
      if (row.key) thumbs.set(row.index, await linker.url(row.key));
    }),
  );
  return thumbs;
}

/** X-Request-Id of the request that created the account's job (null for older jobs). */
export async function jobRequestId(db: Db, accountId: string, jobId: string) {
  const [row] = await db
    .select({ requestId: jobs.requestId })
    .from(jobs)
    .where(and(eq(jobs.id, jobId), eq(jobs.accountId, accountId)));
  return row?.requestId ?? null;
}
