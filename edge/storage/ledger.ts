// The storage module of the ledger group (issue 35, decision 0270): the credit_ledger
// statements that settle a job's credits, and the cron's renewal of plan credits at a period's
// end. Prepared SQL, as the accounts store: every change of balance is a ledger row whose id
// says what caused it (`reserve:<job>`, written with the job in edge/jobs/store/jobs.ts;
// `settle:<job>`, here; `renewal:<account>:<period>`), in the same D1 batch (one transaction)
// as the balance it changes; the id's uniqueness is what stops a redelivered message from
// charging twice (edge/credits.ts isUniqueViolation).
//
// A job holds at creation only what it is sure to cost (edge/jobs/options.ts creditHold).
// What the probe finds out is settled here, atomically: the job is charged its real cost only
// while its hold and the account's free credits cover it; otherwise the settlement batch fails
// as a whole and the job is settled again as failed with InsufficientBalance, uncharged. Two
// jobs settling at once are serialised by D1, so they never spend the same credits twice.
import type { Statement } from "../../schema/accounts.ts";
import { LIVE_STATUSES } from "../../schema/ledger.ts";
import { bound, type D1 } from "./accounts.ts";

const AVAILABLE = "(plan_credits + pack_credits - reserved_credits)";
/** The job's hold (its `reserve:` entry), with the job's id bound as ?2. */
const HOLD = `(SELECT coalesce(sum(reserved_delta), 0) FROM credit_ledger WHERE id = 'reserve:' || ?2)`;

/** The settlement batch failed because the account could not cover the job's cost. */
export function isUnaffordable(err: unknown): boolean {
  return String(err).includes("NOT NULL constraint failed: credit_ledger.kind");
}

/**
 * The statements that end a job's hold and charge `cost` (plan credits first, then pack).
 * They belong in the same D1 batch as the job's final state. Two guards fail the whole batch,
 * so nothing of it is written: the ledger entry's id (`settle:<job>`) is unique, so a second
 * settlement is refused (isUniqueViolation); and when the hold plus the free credits cannot
 * cover `cost`, the entry's kind comes out NULL, which its NOT NULL column refuses
 * (isUnaffordable).
 */
export function settlementStatements(
  db: D1Database,
  accountId: string,
  jobId: string,
  cost: number,
): D1PreparedStatement[] {
  const entryId = `settle:${jobId}`;
  const fromPlan = `min(max(plan_credits, 0), ?3)`;
  return [
    db
      .prepare(
        `INSERT INTO credit_ledger
           (id, account_id, job_id, kind, plan_delta, pack_delta, reserved_delta, note)
         SELECT ?1, id, ?2,
                CASE WHEN ?3 = 0 OR ?3 <= ${AVAILABLE} + ${HOLD} THEN ?5 END,
                -${fromPlan}, -(?3 - ${fromPlan}), -${HOLD},
                CASE WHEN ?3 > 0 THEN 'charged at completion' ELSE 'hold released' END
         FROM accounts WHERE id = ?4`,
      )
      .bind(entryId, jobId, Math.max(0, cost), accountId, cost > 0 ? "charge" : "release"),
    db
      .prepare(
        `UPDATE accounts SET
           plan_credits = plan_credits + (SELECT plan_delta FROM credit_ledger WHERE id = ?1),
           pack_credits = pack_credits + (SELECT pack_delta FROM credit_ledger WHERE id = ?1),
           reserved_credits = reserved_credits + (SELECT reserved_delta FROM credit_ledger WHERE id = ?1)
         WHERE id = ?2`,
      )
      .bind(entryId, accountId),
  ];
}

/**
 * Whether the job's hold plus the account's free credits cover `cost` now: the condition the
 * settlement's ledger entry checks, read ahead of it (a job that fails it is stopped early).
 */
export async function holdAndFreeCover(
  db: D1Database,
  accountId: string,
  jobId: string,
  cost: number,
): Promise<boolean> {
  const row = await db
    .prepare(`SELECT ?3 <= ${AVAILABLE} + ${HOLD} AS covered FROM accounts WHERE id = ?1`)
    .bind(accountId, jobId, cost)
    .first<{ covered: number }>();
  // No account row: nothing to weigh here; settlement decides as before.
  return row === null || row.covered === 1;
}

/** What a settled job was charged, from its ledger entry. */
export const CHARGED_SQL = `(SELECT -(plan_delta + pack_delta) FROM credit_ledger WHERE id = 'settle:' || ?)`;

/** An account whose period has ended, with the end that starts its next one. */
export interface RenewalDue {
  id: string;
  period_end: string;
}

/**
 * Accounts whose period ended at or before `at` that the cron renews: all but those with a
 * live Stripe subscription (Stripe's invoice.paid renews those, edge/billing).
 */
export async function renewalsDue(d1: D1, at: string, limit: number): Promise<RenewalDue[]> {
  const live = LIVE_STATUSES.map((_, i) => `?${i + 2}`).join(", ");
  const { results } = await d1
    .prepare(
      `SELECT id, period_end FROM accounts WHERE period_end <= ?1
         AND NOT (stripe_subscription_id IS NOT NULL
                  AND coalesce(subscription_status, '') IN (${live}))
       LIMIT ${Number(limit)}`,
    )
    .bind(at, ...LIVE_STATUSES)
    .all<RenewalDue>();
  return results;
}

/**
 * Applies schema/ledger.ts's statements (a renewal's: its entry and the balances it changes) in
 * one batch. Throws D1's unique violation when the entry was applied before.
 */
export async function applyLedgerStatements(d1: D1, statements: Statement[]): Promise<void> {
  await d1.batch(statements.map((s) => bound(d1, s)));
}
