// The calling account's usage (spec §2 Usage): plan, live balance, limits, this period's jobs
// and the newest ledger entries. A function of its own so the MCP tools answer the same body.
import { desc, eq, inArray, sql } from "drizzle-orm";
import type { Context } from "hono";
import { accounts, creditLedger, jobs } from "../schema/db.ts";
import { COMPLETED, EXPIRED, FAILED } from "../schema/job-status.ts";
import type { AppEnv } from "./context.ts";
import { planOf } from "./plan-of.ts";

const RECENT_LEDGER_ENTRIES = 20;

export async function usageBody(c: Context<AppEnv>) {
  const db = c.get("db");
  // Read again rather than taken from the key check's cache, which may be seconds old. GET
  // /v1/usage reads through a replica session (edge/storage/d1-sessions.ts): with the
  // X-D1-Bookmark of the client's last write it includes that write; without, it may lag.
  const [account] = await db
    .select()
    .from(accounts)
    .where(eq(accounts.id, c.get("account").id));
  const plan = planOf(account);
  const periodStart = account.periodStart ?? account.createdAt;
  const [[period], ledger] = await Promise.all([
    db
      .select({
        jobs_created: sql<number>`count(*)`,
        // An expired job completed: its files are gone, not its place in the period's count.
        jobs_completed: sql<number>`coalesce(sum(${inArray(jobs.status, [COMPLETED, EXPIRED])}), 0)`,
        jobs_failed: sql<number>`coalesce(sum(${eq(jobs.status, FAILED)}), 0)`,
        credits_charged: sql<number>`coalesce(sum(${jobs.creditsCharged}), 0)`,
        frames_delivered: sql<number>`coalesce(sum(${jobs.framesCount} - ${jobs.framesFailed}), 0)`,
      })
      .from(jobs)
      .where(sql`${jobs.accountId} = ${account.id} AND ${jobs.createdAt} >= ${periodStart}`),
    db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.accountId, account.id))
      .orderBy(desc(creditLedger.createdAt), desc(creditLedger.id))
      .limit(RECENT_LEDGER_ENTRIES),
  ]);
  const { max_resolution: _maxResolution, ...limits } = plan.limits;
  return {
    object: "usage" as const,
    plan: plan.name,
    credits: {
      available: Math.max(0, account.planCredits + account.packCredits - account.reservedCredits),
      plan: account.planCredits,
      pack: account.packCredits,
      monthly_allowance: plan.monthly_credits,
    },
    period: { start: account.periodStart, end: account.periodEnd },
    subscription: account.subscriptionStatus
      ? { status: account.subscriptionStatus, cancel_at_period_end: account.cancelAtPeriodEnd }
      : null,
    limits,
    this_period: { ...period, credits_reserved: account.reservedCredits },
    recent_ledger: ledger.map((entry) => ({
      id: entry.id,
      kind: entry.kind,
      job_id: entry.jobId,
      plan_delta: entry.planDelta,
      pack_delta: entry.packDelta,
      reserved_delta: entry.reservedDelta,
      note: entry.note,
      created_at: entry.createdAt,
    })),
  };
}
