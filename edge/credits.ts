// Credits move only through these functions. Every change of balance is a ledger row whose id
// says what caused it (`reserve:<job>`, `settle:<job>`), written in the same D1 batch (one
// transaction) as the balance it changes; the id's uniqueness is what stops a redelivered
// message from charging twice.

const AVAILABLE = "(plan_credits + pack_credits - reserved_credits)";

/**
 * Holds up to `amount` credits for a job: all of it when the account has it, else what it
 * has, but never fewer than `minimum`. Returns what was held, or null when refused.
 */
export async function reserveCredits(
  db: D1Database,
  accountId: string,
  jobId: string,
  amount: number,
  minimum: number,
): Promise<number | null> {
  const entryId = `reserve:${jobId}`;
  const [inserted] = await db.batch<{ reserved_delta: number }>([
    db
      .prepare(
        `INSERT INTO credit_ledger (id, account_id, job_id, kind, reserved_delta, note)
         SELECT ?1, id, ?2, 'reserve', min(?3, ${AVAILABLE}), 'held until the job finishes'
         FROM accounts WHERE id = ?4 AND ${AVAILABLE} >= ?5
         RETURNING reserved_delta`,
      )
      .bind(entryId, jobId, amount, accountId, minimum),
    db
      .prepare(
        `UPDATE accounts SET reserved_credits = reserved_credits +
           (SELECT reserved_delta FROM credit_ledger WHERE id = ?1)
         WHERE id = ?2 AND EXISTS (SELECT 1 FROM credit_ledger WHERE id = ?1)`,
      )
      .bind(entryId, accountId),
  ]);
  const row = inserted.results[0];
  return row ? row.reserved_delta : null;
}

/** Gives back a job's hold without charging (failed job, or a create that did not finish). */
export async function releaseCredits(db: D1Database, accountId: string, jobId: string) {
  await settleCredits(db, accountId, jobId, 0, "release");
}

/**
 * Ends a job's hold and charges `cost` (plan credits first, then pack), capped at what the
 * account can pay. Idempotent: a second call for the same job changes nothing and returns
 * the first charge.
 */
export async function settleCredits(
  db: D1Database,
  accountId: string,
  jobId: string,
  cost: number,
  kind: "charge" | "release" = "charge",
): Promise<number> {
  const entryId = `settle:${jobId}`;
  const hold = `(SELECT coalesce(sum(reserved_delta), 0) FROM credit_ledger WHERE id = 'reserve:' || ?2)`;
  // What this job may take: its cost, but no more than its hold plus what is free.
  const charge = `min(?3, ${AVAILABLE} + ${hold})`;
  const fromPlan = `min(plan_credits, ${charge})`;
  await db.batch([
    db
      .prepare(
        `INSERT OR IGNORE INTO credit_ledger
           (id, account_id, job_id, kind, plan_delta, pack_delta, reserved_delta, note)
         SELECT ?1, id, ?2, ?5, -${fromPlan}, -(${charge} - ${fromPlan}), -${hold},
                CASE WHEN ?3 > 0 THEN 'charged at completion' ELSE 'hold released' END
         FROM accounts WHERE id = ?4`,
      )
      .bind(entryId, jobId, cost, accountId, kind),
    // Applies the entry just written, and only if this call wrote it.
    db
      .prepare(
        `UPDATE accounts SET
           plan_credits = plan_credits + (SELECT plan_delta FROM credit_ledger WHERE id = ?1),
           pack_credits = pack_credits + (SELECT pack_delta FROM credit_ledger WHERE id = ?1),
           reserved_credits = reserved_credits + (SELECT reserved_delta FROM credit_ledger WHERE id = ?1)
         WHERE id = ?2 AND changes() = 1`,
      )
      .bind(entryId, accountId),
  ]);
  const entry = await db
    .prepare(`SELECT -(plan_delta + pack_delta) AS charged FROM credit_ledger WHERE id = ?1`)
    .bind(entryId)
    .first<{ charged: number }>();
  return entry?.charged ?? 0;
}

export interface Balance {
  plan: number;
  pack: number;
  reserved: number;
  available: number;
}
