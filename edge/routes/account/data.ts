// What the dashboard reads and changes, apart from how it is shown. Its SQL is the stores':
// the job list's in edge/jobs/store/listing.ts; this turns rows into what the pages show.
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { type AccountRow, accounts } from "../../../schema/db.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv, Db } from "../../context.ts";
import { fileLinker } from "../../files.ts";
import { visibleStatus } from "../../jobs/lifecycle.ts";
import {
  firstThumbKeys,
  type JobFilter,
  jobListPage,
  thumbKeysOf,
} from "../../jobs/store/listing.ts";
import { baseUrl } from "../../request.ts";
import { filesAreLive } from "../../serialize.ts";
import { optionsLabel } from "./job-options.ts";

/** The account as it is now (the session's copy may be older than a purchase or a job). */
export async function liveAccount(db: Db, accountId: string): Promise<AccountRow> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return account;
}

export {
  JOB_TABS,
  type JobFilter,
  type JobTab,
  jobRequestId,
  jobTabCounts,
} from "../../jobs/store/listing.ts";

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
  const { total, rows } = await jobListPage(c.get("db"), accountId, limit, offset, filter);
  const live = rows.filter((row) => filesAreLive(row));
  const { secrets } = edgeConfig(c.env);
  const firstThumbs = await firstThumbKeys(
    c.env.DB,
    live.map((row) => row.id),
  );
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
  const rows = await thumbKeysOf(c.get("db"), job.id);
  const linker = fileLinker(edgeConfig(c.env).secrets.fileUrlSecret, baseUrl(c), job.expires_at);
  await Promise.all(
    rows.map(async (row) => {
      if (row.key) thumbs.set(row.index, await linker.url(row.key));
    }),
  );
  return thumbs;
}
