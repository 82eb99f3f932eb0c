// The job store's expiry looks, for the cron (edge/maintenance.ts), one table (kind) at a time
// (decision 0200).
import type { JobKind } from "../../../schema/messages.ts";
import { type JobRef, tableOf, UNSETTLED_SQL } from "./status.ts";

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
