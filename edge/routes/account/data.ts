// What the dashboard reads and changes, apart from how it is shown.
import { and, desc, eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import { type AccountRow, accounts, creditLedger, jobs } from "../../../schema/db.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv, Db } from "../../context.ts";
import { fileLinker } from "../../files.ts";
import { baseUrl } from "../../jobs/read.ts";
import { filesAreLive } from "../../serialize.ts";

/** The account as it is now (the session's copy may be older than a purchase or a job). */
export async function liveAccount(db: Db, accountId: string): Promise<AccountRow> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return account;
}

export function ledgerPage(db: Db, accountId: string, limit: number, offset: number) {
  return db
    .select()
    .from(creditLedger)
    .where(eq(creditLedger.accountId, accountId))
    .orderBy(desc(creditLedger.createdAt), sql`rowid DESC`)
    .limit(limit)
    .offset(offset);
}

export function ledgerSize(db: Db, accountId: string): Promise<number> {
  return db.$count(creditLedger, eq(creditLedger.accountId, accountId));
}

export interface JobListRow {
  id: string;
  status: string;
  url: string;
  platform: string;
  framesCount: number | null;
  framesFailed: number;
  creditsCharged: number | null;
  createdAt: string;
  width: number | null;
  height: number | null;
  /** Signed URL of the first good frame while the job's files live. */
  thumbnailUrl: string | null;
}

/** The account's jobs, newest first, each with the signed URL of its first good frame. */
export async function jobsWithThumbnails(
  c: Context<AppEnv>,
  accountId: string,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: JobListRow[] }> {
  const db = c.get("db");
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: sql<number>`count(*)` }).from(jobs).where(eq(jobs.accountId, accountId)),
    db
      .select()
      .from(jobs)
      .where(eq(jobs.accountId, accountId))
      .orderBy(desc(jobs.createdAt), sql`rowid DESC`)
      .limit(limit)
      .offset(offset),
  ]);
  const live = rows.filter((row) => filesAreLive(row));
  const { secrets } = edgeConfig(c.env);
  const firstFrames = new Map<string, string>();
  if (live.length > 0) {
    // SQLite returns the other columns of the row that holds min(idx).
    const { results } = await c.env.DB.prepare(
      `SELECT job_id, r2_key, min(idx) AS idx FROM frames
       WHERE status = 'ok' AND r2_key IS NOT NULL AND job_id IN (${live.map(() => "?").join(", ")})
       GROUP BY job_id`,
    )
      .bind(...live.map((row) => row.id))
      .all<{ job_id: string; r2_key: string }>();
    for (const frame of results) firstFrames.set(frame.job_id, frame.r2_key);
  }
  const listed = await Promise.all(
    rows.map(async (row): Promise<JobListRow> => {
      const key = firstFrames.get(row.id);
      const thumbnailUrl =
        key && row.expiresAt
          ? await fileLinker(secrets.fileUrlSecret, baseUrl(c), row.expiresAt).url(key)
          : null;
      return {
        id: row.id,
        status: filesAreLive(row) || row.status !== "completed" ? row.status : "expired",
        url: row.url,
        platform: row.platform,
        framesCount: row.framesCount,
        framesFailed: row.framesFailed,
        creditsCharged: row.creditsCharged,
        createdAt: row.createdAt,
        width: row.width,
        height: row.height,
        thumbnailUrl,
      };
    }),
  );
  return { total, rows: listed };
}

/** X-Request-Id of the request that created the account's job (null for older jobs). */
export async function jobRequestId(db: Db, accountId: string, jobId: string) {
  const [row] = await db
    .select({ requestId: jobs.requestId })
    .from(jobs)
    .where(and(eq(jobs.id, jobId), eq(jobs.accountId, accountId)));
  return row?.requestId ?? null;
}
