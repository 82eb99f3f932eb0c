// The storage of an account's recent API requests (decision 0250): every statement on
// `api_requests`. A request is written behind its response; the newest API_REQUESTS_KEPT per
// account and API_REQUEST_DAYS are kept: the write trims its account now and then, and the
// cron trims the accounts that wrote lately and drops what is older than the window.
import { and, asc, count, desc, eq, gte, inArray, lt, lte } from "drizzle-orm";
import {
  API_REQUEST_DAYS,
  API_REQUESTS_KEPT,
  type ApiRequestEntry,
} from "../../schema/api-requests.ts";
import { apiRequests, jobs } from "../../schema/db.ts";
import type { Db } from "../context.ts";

export interface ApiRequestRecord extends ApiRequestEntry {
  account_id: string;
}

/** The account's rows past its newest API_REQUESTS_KEPT. */
function trimAccount(db: Db, accountId: string) {
  const oldestKept = db
    .select({ id: apiRequests.id })
    .from(apiRequests)
    .where(eq(apiRequests.accountId, accountId))
    .orderBy(desc(apiRequests.id))
    .limit(1)
    .offset(API_REQUESTS_KEPT);
  return db
    .delete(apiRequests)
    .where(and(eq(apiRequests.accountId, accountId), lte(apiRequests.id, oldestKept)));
}

/** One request; with `trim`, its account's rows past the bound go in the same batch. */
export async function recordApiRequest(db: Db, entry: ApiRequestRecord, trim: boolean) {
  const insert = db.insert(apiRequests).values({
    accountId: entry.account_id,
    requestId: entry.request_id,
    method: entry.method,
    route: entry.route,
    status: entry.status,
    error: entry.error,
    latencyMs: entry.latency_ms,
    createdAt: entry.created_at,
  });
  if (trim) await db.batch([insert, trimAccount(db, entry.account_id)]);
  else await insert;
}

const ENTRY_COLUMNS = {
  request_id: apiRequests.requestId,
  method: apiRequests.method,
  route: apiRequests.route,
  status: apiRequests.status,
  error: apiRequests.error,
  latency_ms: apiRequests.latencyMs,
  created_at: apiRequests.createdAt,
};

/**
 * A page of the account's requests of the last API_REQUEST_DAYS, newest first, and how many
 * there are. With `requestId`, only requests whose id starts with it (a quoted id, or its start).
 */
export async function listApiRequests(
  db: Db,
  accountId: string,
  page: { limit: number; offset: number; requestId?: string; now: number },
): Promise<{ rows: ApiRequestEntry[]; total: number }> {
  const since = new Date(page.now - API_REQUEST_DAYS * 86_400_000).toISOString();
  const conditions = [eq(apiRequests.accountId, accountId), gte(apiRequests.createdAt, since)];
  if (page.requestId) {
    // A prefix as a range on the (account, request id) index; U+FFFF sorts after any id.
    conditions.push(
      gte(apiRequests.requestId, page.requestId),
      lt(apiRequests.requestId, `${page.requestId}\uffff`),
    );
  }
  const where = and(...conditions);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select(ENTRY_COLUMNS)
      .from(apiRequests)
      .where(where)
      .orderBy(desc(apiRequests.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(apiRequests).where(where),
  ]);
  return { rows, total: Math.min(total, API_REQUESTS_KEPT) };
}

/** Rows deleted per statement by the cron, so one run never holds D1 for long. */
const PRUNE_BATCH = 5000;
/** Accounts trimmed per cron run (the ones that wrote since the last run). */
const TRIM_ACCOUNTS = 500;

/**
 * The cron's part: requests older than API_REQUEST_DAYS go, and every account that wrote
 * since `since` is trimmed to its newest API_REQUESTS_KEPT. Returns how many rows went.
 */
export async function pruneApiRequests(db: Db, now: number, since: number): Promise<number> {
  const cutoff = new Date(now - API_REQUEST_DAYS * 86_400_000).toISOString();
  let removed = 0;
  for (;;) {
    const old = db
      .select({ id: apiRequests.id })
      .from(apiRequests)
      .where(lt(apiRequests.createdAt, cutoff))
      .orderBy(asc(apiRequests.createdAt))
      .limit(PRUNE_BATCH);
    const result = await db.delete(apiRequests).where(inArray(apiRequests.id, old));
    const changes = result.meta.changes ?? 0;
    removed += changes;
    if (changes < PRUNE_BATCH) break;
  }
  const writers = await db
    .selectDistinct({ accountId: apiRequests.accountId })
    .from(apiRequests)
    .where(gte(apiRequests.createdAt, new Date(since).toISOString()))
    .limit(TRIM_ACCOUNTS);
  for (const { accountId } of writers) {
    const result = await trimAccount(db, accountId);
    removed += result.meta.changes ?? 0;
  }
  return removed;
}

/**
 * The jobs the account's requests `requestIds` created (a job keeps its creating request's id),
 * by request id: what a POST /v1/jobs in the list led to. A read of the jobs table beside the
 * log, by the (account, created_at) index: only jobs of the log's window.
 */
export async function jobsCreatedBy(
  db: Db,
  accountId: string,
  requestIds: string[],
  now: number,
): Promise<Map<string, string>> {
  if (requestIds.length === 0) return new Map();
  const since = new Date(now - API_REQUEST_DAYS * 86_400_000).toISOString();
  const rows = await db
    .select({ id: jobs.id, requestId: jobs.requestId })
    .from(jobs)
    .where(
      and(
        eq(jobs.accountId, accountId),
        gte(jobs.createdAt, since),
        inArray(jobs.requestId, requestIds),
      ),
    );
  return new Map(rows.map((row) => [row.requestId ?? "", row.id]));
}
