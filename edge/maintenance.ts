// The cron run: expires finished jobs past their retention (deleting their files), fails jobs
// that have been stuck far longer than any extraction can take, and renews plan credits.
import { addMonth } from "../schema/accounts.ts";
import { isPlanName, PLANS } from "../schema/plans.ts";
import { isUniqueViolation } from "./credits.ts";
import { deletePrefix, failJob } from "./queues/results.ts";

const EXPIRE_BATCH = 200;
const STUCK_AFTER_MS = 3 * 3600_000;

export async function expireJobs(env: Env, now: number): Promise<number> {
  let expired = 0;
  for (const [table, kind] of [
    ["jobs", "job"],
    ["demo_jobs", "demo"],
  ] as const) {
    const { results } = await env.DB.prepare(
      `SELECT id FROM ${table} WHERE status = 'completed' AND expires_at <= ?1 LIMIT ${EXPIRE_BATCH}`,
    )
      .bind(new Date(now).toISOString())
      .all<{ id: string }>();
    for (const { id } of results) {
      await env.DB.prepare(`UPDATE ${table} SET status = 'expired' WHERE id = ?1`).bind(id).run();
      await deletePrefix(env, `${kind}/${id}/`);
      expired++;
    }
    // Failed jobs keep their status; what their attempts left is deleted, once.
    const failed = await env.DB.prepare(
      `SELECT id FROM ${table} WHERE status = 'failed' AND expires_at <= ?1 LIMIT ${EXPIRE_BATCH}`,
    )
      .bind(new Date(now).toISOString())
      .all<{ id: string }>();
    for (const { id } of failed.results) {
      await deletePrefix(env, `${kind}/${id}/`);
      await env.DB.prepare(`UPDATE ${table} SET expires_at = NULL WHERE id = ?1`).bind(id).run();
    }
  }
  return expired;
}

async function failStuckJobs(env: Env, now: number) {
  const before = new Date(now - STUCK_AFTER_MS).toISOString();
  for (const [table, kind] of [
    ["jobs", "job"],
    ["demo_jobs", "demo"],
  ] as const) {
    const { results } = await env.DB.prepare(
      `SELECT id FROM ${table} WHERE status IN ('queued', 'processing') AND created_at <= ?1 LIMIT 100`,
    )
      .bind(before)
      .all<{ id: string }>();
    for (const { id } of results) {
      await failJob(env, { kind, id }, "ExtractionFailed", "the job did not finish in time");
    }
  }
}

/** Plan credits reset to the monthly allowance when a period ends; pack credits stay. */
export async function renewPlanCredits(env: Env, now: number) {
  const { results } = await env.DB.prepare(
    "SELECT id, plan, period_end FROM accounts WHERE period_end <= ?1 LIMIT 500",
  )
    .bind(new Date(now).toISOString())
    .all<{ id: string; plan: string; period_end: string }>();
  for (const account of results) {
    const allowance = PLANS[isPlanName(account.plan) ? account.plan : "free"].monthly_credits;
    const start = account.period_end;
    const entryId = `renewal:${account.id}:${start}`;
    try {
      // The delta is read in the same transaction that applies it; the entry id makes a
      // second run for the same period fail as a whole.
      await env.DB.batch([
        env.DB.prepare(
          `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
           SELECT ?1, id, 'renewal', ?2 - plan_credits, 'plan credits renewed for the new period'
           FROM accounts WHERE id = ?3`,
        ).bind(entryId, allowance, account.id),
        env.DB.prepare(
          `UPDATE accounts SET plan_credits = plan_credits +
             (SELECT plan_delta FROM credit_ledger WHERE id = ?1), period_start = ?2, period_end = ?3
           WHERE id = ?4`,
        ).bind(entryId, start, addMonth(new Date(start)).toISOString(), account.id),
      ]);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
}

export async function runScheduledMaintenance(env: Env, now: number) {
  await expireJobs(env, now);
  await failStuckJobs(env, now);
  await renewPlanCredits(env, now);
}
