// Reading jobs: one job with its frames and signed URLs, the newest-first list, and wait=true.
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import { type DemoJobRow, demoJobs, frames, type JobRow, jobs } from "../../schema/db.ts";
import type { AppEnv, Db } from "../context.ts";
import { ApiError } from "../errors.ts";
import { fileLinker } from "../files.ts";
import { demoJobToApi, filesAreLive, jobToApi } from "../serialize.ts";

export const WAIT_LIMIT_MS = 50_000;
const WAIT_POLL_MS = 500;
const FINAL = new Set(["completed", "failed", "expired"]);

export function baseUrl(c: Context<AppEnv>): string {
  return c.env.PUBLIC_BASE_URL || new URL(c.req.url).origin;
}

function linkerFor(c: Context<AppEnv>, row: { status: string; expiresAt: string | null }) {
  return filesAreLive(row) && row.expiresAt
    ? fileLinker(c.env.FILE_URL_SECRET, baseUrl(c), row.expiresAt)
    : null;
}

function frameRows(db: Db, jobId: string) {
  return db.select().from(frames).where(eq(frames.jobId, jobId)).orderBy(asc(frames.index));
}

export function jobNotFound(id: string) {
  return new ApiError("JobNotFound", `No job with id ${id}`, {
    userMessage: "We couldn't find that job.",
  });
}

async function findJob(c: Context<AppEnv>, id: string): Promise<JobRow> {
  const [row] = await c
    .get("db")
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), eq(jobs.accountId, c.get("account").id)));
  // Another account's job answers exactly like a missing one.
  if (!row) throw jobNotFound(id);
  return row;
}

/** Polls until `load` returns a finished row or the wait limit passes. */
async function waitUntilFinal<T extends { status: string }>(
  first: T,
  load: () => Promise<T>,
  limitMs: number,
) {
  const deadline = Date.now() + limitMs;
  let row = first;
  while (!FINAL.has(row.status) && Date.now() < deadline) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(WAIT_POLL_MS, deadline - Date.now())),
    );
    row = await load();
  }
  return row;
}

/** The job and its frames in one D1 round trip. */
async function findJobWithFrames(c: Context<AppEnv>, id: string) {
  const db = c.get("db");
  const [jobRows, frameList] = await db.batch([
    db
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, id), eq(jobs.accountId, c.get("account").id))),
    frameRows(db, id),
  ]);
  // Another account's job answers exactly like a missing one.
  if (!jobRows[0]) throw jobNotFound(id);
  return { row: jobRows[0], frameList };
}

export async function readJob(c: Context<AppEnv>, id: string, wait: boolean) {
  let found = await findJobWithFrames(c, id);
  if (wait && !FINAL.has(found.row.status)) {
    const row = await waitUntilFinal(found.row, () => findJob(c, id), WAIT_LIMIT_MS);
    found = FINAL.has(row.status) ? await findJobWithFrames(c, id) : { row, frameList: [] };
  }
  return jobToApi(found.row, found.frameList, linkerFor(c, found.row));
}

export async function listJobs(
  c: Context<AppEnv>,
  query: { limit: number; skip: number; status?: string },
) {
  const db = c.get("db");
  const where = and(
    eq(jobs.accountId, c.get("account").id),
    query.status ? eq(jobs.status, query.status) : undefined,
    // A completed job past its expiry reads "expired" before the cron run marks it, so the
    // filter must not list it as completed either.
    query.status === "completed"
      ? sql`(${jobs.expiresAt} IS NULL OR ${jobs.expiresAt} > ${new Date().toISOString()})`
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
  // Rows carry no file URLs (spec §4): read a single job for them.
  const data = await Promise.all(rows.map((row) => jobToApi(row, [], null)));
  return { total, limit: query.limit, skip: query.skip, data };
}

async function findDemo(c: Context<AppEnv>, id: string): Promise<DemoJobRow> {
  const [row] = await c.get("db").select().from(demoJobs).where(eq(demoJobs.id, id));
  if (!row) throw jobNotFound(id);
  return row;
}

export async function readDemoJob(c: Context<AppEnv>, id: string) {
  const row = await findDemo(c, id);
  return demoJobToApi(row, await frameRows(c.get("db"), id), linkerFor(c, row));
}
