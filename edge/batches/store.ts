// The batch store: every statement on `batches` and `batch_items` (schema/db.ts), prepared SQL
// taking the D1Database it runs on. A batch's state is written only through completeBatch,
// called by edge/batches/lifecycle.ts alone.
import { UNSETTLED_SQL } from "../jobs/lifecycle.ts";

export const ACTIVE = "active";
export const COMPLETED = "completed";

/** An item's state in its row; its status as the API shows it is itemStatusSql's. */
export const ITEM_PENDING = "pending";
export const ITEM_JOB = "job";
export const ITEM_FAILED = "failed";

export interface BatchRecord {
  id: string;
  account_id: string;
  state: string;
  options: string;
  webhook_url: string | null;
  item_count: number;
  request_hash: string;
  request_id: string | null;
  created_at: string;
  completed_at: string | null;
  event_queued_at: string | null;
}

export interface NewItem {
  url: string;
  /** A JobError as JSON for an item refused at creation, else null (pending). */
  error: string | null;
}

/**
 * The batch and its items in one D1 batch: the batch row only while the account has fewer than
 * `maxActive` active batches, and the items only with it. False when the limit refused it.
 */
export async function insertBatch(
  db: D1Database,
  batch: {
    id: string;
    accountId: string;
    options: string;
    webhookUrl: string | null;
    idempotencyKey: string | null;
    requestHash: string;
    requestId: string | null;
  },
  items: NewItem[],
  maxActive: number,
): Promise<boolean> {
  const [inserted] = await db.batch([
    db
      .prepare(
        `INSERT INTO batches (id, account_id, state, options, webhook_url, item_count,
           idempotency_key, request_hash, request_id)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
         WHERE (SELECT count(*) FROM batches WHERE account_id = ?2 AND state = ?3) < ?10`,
      )
      .bind(
        batch.id,
        batch.accountId,
        ACTIVE,
        batch.options,
        batch.webhookUrl,
        items.length,
        batch.idempotencyKey,
        batch.requestHash,
        batch.requestId,
        maxActive,
      ),
    db
      .prepare(
        `INSERT INTO batch_items (batch_id, idx, url, state, error)
         SELECT ?1, key + 1, json_extract(value, '$.url'),
           CASE WHEN json_extract(value, '$.error') IS NULL THEN ?3 ELSE ?4 END,
           json_extract(value, '$.error')
         FROM json_each(?2) WHERE EXISTS (SELECT 1 FROM batches WHERE id = ?1)`,
      )
      .bind(batch.id, JSON.stringify(items), ITEM_PENDING, ITEM_FAILED),
  ]);
  return inserted.meta.changes === 1;
}

/** The batch an Idempotency-Key of this account created, and its request's hash. */
export function batchByIdempotencyKey(db: D1Database, accountId: string, key: string) {
  return db
    .prepare("SELECT id, request_hash FROM batches WHERE account_id = ?1 AND idempotency_key = ?2")
    .bind(accountId, key)
    .first<{ id: string; request_hash: string }>();
}

export async function activeBatchCount(db: D1Database, accountId: string): Promise<number> {
  const row = await db
    .prepare("SELECT count(*) AS n FROM batches WHERE account_id = ?1 AND state = ?2")
    .bind(accountId, ACTIVE)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** A batch by id; with an account, only that account's. */
export function batchById(db: D1Database, batchId: string, accountId?: string) {
  return db
    .prepare(
      `SELECT * FROM batches WHERE id = ?1 ${accountId === undefined ? "" : "AND account_id = ?2"}`,
    )
    .bind(...(accountId === undefined ? [batchId] : [batchId, accountId]))
    .first<BatchRecord>();
}

/** A page of the account's batches, newest first, and how many it has. */
export async function batchPage(db: D1Database, accountId: string, limit: number, skip: number) {
  const [total, rows] = await db.batch([
    db.prepare("SELECT count(*) AS n FROM batches WHERE account_id = ?1").bind(accountId),
    db
      .prepare(
        `SELECT * FROM batches WHERE account_id = ?1
         ORDER BY created_at DESC, rowid DESC LIMIT ?2 OFFSET ?3`,
      )
      .bind(accountId, limit, skip),
  ]);
  return {
    total: (total.results[0] as { n: number }).n,
    rows: rows.results as unknown as BatchRecord[],
  };
}

/** An item's status as the API shows it: its job's (expired once past expiry), or its own. */
const ITEM_STATUS_SQL = `CASE
  WHEN i.state = '${ITEM_PENDING}' THEN 'pending'
  WHEN i.state = '${ITEM_FAILED}' OR j.id IS NULL THEN 'failed'
  WHEN j.status = 'completed' AND j.expires_at IS NOT NULL AND j.expires_at <= ?2 THEN 'expired'
  ELSE j.status END`;

export interface ItemTally {
  batch_id: string;
  status: string;
  n: number;
  credits: number;
  started: number;
}

/** How many items of each batch are in each status, what their jobs were charged, and whether any started. */
export async function itemTallies(db: D1Database, batchIds: string[], now: string) {
  if (batchIds.length === 0) return [];
  const { results } = await db
    .prepare(
      // Grouped in an outer query: in a GROUP BY, SQLite reads `status` as the jobs
      // column before the alias, which lumped every item without a job (waiting, refused)
      // into one group, and expired items with completed ones.
      `SELECT batch_id, status, count(*) AS n, coalesce(sum(credits_charged), 0) AS credits,
         max(started) AS started
       FROM (SELECT i.batch_id, ${ITEM_STATUS_SQL} AS status, j.credits_charged,
               CASE WHEN j.started_at IS NOT NULL THEN 1 ELSE 0 END AS started
             FROM batch_items i LEFT JOIN jobs j ON j.id = i.job_id
             WHERE i.batch_id IN (SELECT value FROM json_each(?1)))
       GROUP BY batch_id, status`,
    )
    .bind(JSON.stringify(batchIds), now)
    .all<ItemTally>();
  return results;
}

export interface ItemRecord {
  idx: number;
  url: string;
  status: string;
  job_id: string | null;
  item_error: string | null;
  job_error: string | null;
}

/** A page of a batch's items in their order, each with its job's status and error. */
export async function itemPage(
  db: D1Database,
  batchId: string,
  limit: number,
  skip: number,
  now: string,
): Promise<ItemRecord[]> {
  const { results } = await db
    .prepare(
      `SELECT i.idx, i.url, ${ITEM_STATUS_SQL} AS status, i.job_id, i.error AS item_error,
         j.error AS job_error
       FROM batch_items i LEFT JOIN jobs j ON j.id = i.job_id
       WHERE i.batch_id = ?1 ORDER BY i.idx LIMIT ?3 OFFSET ?4`,
    )
    .bind(batchId, now, limit, skip)
    .all<ItemRecord>();
  return results;
}

/** The batch's first `limit` items still waiting to become jobs. */
export async function pendingItems(db: D1Database, batchId: string, limit: number) {
  const { results } = await db
    .prepare(
      `SELECT idx, url FROM batch_items WHERE batch_id = ?1 AND state = ?2 ORDER BY idx LIMIT ?3`,
    )
    .bind(batchId, ITEM_PENDING, limit)
    .all<{ idx: number; url: string }>();
  return results;
}

/** The item's job. Written whatever the item's state: a job that exists is what the item is. */
export async function setItemJob(db: D1Database, batchId: string, idx: number, jobId: string) {
  await db
    .prepare(
      "UPDATE batch_items SET state = ?3, job_id = ?4, error = NULL WHERE batch_id = ?1 AND idx = ?2",
    )
    .bind(batchId, idx, ITEM_JOB, jobId)
    .run();
}

/** The item could not become a job: failed with its error, only while still pending. */
export async function setItemFailed(db: D1Database, batchId: string, idx: number, error: string) {
  await db
    .prepare(
      "UPDATE batch_items SET state = ?3, error = ?4 WHERE batch_id = ?1 AND idx = ?2 AND state = ?5",
    )
    .bind(batchId, idx, ITEM_FAILED, error, ITEM_PENDING)
    .run();
}

/** The batch a job was created for, or null for a job of no batch. */
export async function batchOfJob(db: D1Database, jobId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT batch_id FROM batch_items WHERE job_id = ?1")
    .bind(jobId)
    .first<{ batch_id: string }>();
  return row?.batch_id ?? null;
}

/** The account's active batches that still have items waiting, oldest first. */
export async function batchesWaiting(db: D1Database, accountId: string): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT b.id FROM batches b WHERE b.account_id = ?1 AND b.state = ?2
         AND EXISTS (SELECT 1 FROM batch_items i WHERE i.batch_id = b.id AND i.state = ?3)
       ORDER BY b.created_at, b.rowid`,
    )
    .bind(accountId, ACTIVE, ITEM_PENDING)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/** Active batches created before `before` (the cron's look at batches a lost hook left behind). */
export async function activeBatchesBefore(db: D1Database, before: string, limit: number) {
  const { results } = await db
    .prepare(
      "SELECT id FROM batches WHERE state = ?1 AND created_at < ?2 ORDER BY created_at LIMIT ?3",
    )
    .bind(ACTIVE, before, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/**
 * active → completed, once no item waits and no item's job is unsettled: one conditional
 * statement, so of every caller that sees the batch done exactly one changes it (true).
 */
export async function completeBatch(db: D1Database, batchId: string, now: string) {
  const { meta } = await db
    .prepare(
      `UPDATE batches SET state = ?3, completed_at = ?2 WHERE id = ?1 AND state = ?4
         AND NOT EXISTS (SELECT 1 FROM batch_items WHERE batch_id = ?1 AND state = ?5)
         AND NOT EXISTS (SELECT 1 FROM batch_items i JOIN jobs j ON j.id = i.job_id
                         WHERE i.batch_id = ?1 AND j.status IN (${UNSETTLED_SQL}))`,
    )
    .bind(batchId, now, COMPLETED, ACTIVE, ITEM_PENDING)
    .run();
  return meta.changes === 1;
}

/** batch.completed is in the webhooks queue (lifecycle.ts, after its send returned). */
export async function markEventQueued(db: D1Database, batchId: string, now: string) {
  await db
    .prepare("UPDATE batches SET event_queued_at = ?2 WHERE id = ?1 AND event_queued_at IS NULL")
    .bind(batchId, now)
    .run();
}

/**
 * Completed batches with a webhook that still owe batch.completed, completed before `before`
 * (a send that failed after completeBatch; the cron sends them again).
 */
export async function completedUnsent(db: D1Database, before: string, limit: number) {
  const { results } = await db
    .prepare(
      `SELECT id FROM batches WHERE state = ?1 AND webhook_url IS NOT NULL
         AND event_queued_at IS NULL AND completed_at < ?2 ORDER BY completed_at LIMIT ?3`,
    )
    .bind(COMPLETED, before, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
