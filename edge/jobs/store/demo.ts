// The job store's demo jobs: a demo job's row and its origin (decision 0200). Its status is
// written by status.ts only.
import { eq } from "drizzle-orm";
import { type DemoJobRow, demoJobs } from "../../../schema/db.ts";
import type { Db } from "../../context.ts";

/** The address hash and creation time of a demo job (its daily allowance's day). */
export function demoJobOrigin(db: D1Database, id: string) {
  return db
    .prepare("SELECT ip_hash, created_at FROM demo_jobs WHERE id = ?1")
    .bind(id)
    .first<{ ip_hash: string; created_at: string }>();
}

export async function demoJobRow(db: Db, id: string) {
  const [row] = await db.select().from(demoJobs).where(eq(demoJobs.id, id));
  return row as DemoJobRow | undefined;
}
