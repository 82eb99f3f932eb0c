// Settling credits. Every change of balance is a ledger row whose id says what caused it
// (`reserve:<job>`, written with the job in edge/jobs/create.ts; `settle:<job>`, here), in the
// same D1 batch (one transaction) as the balance it changes; the id's uniqueness is what
// stops a redelivered message from charging twice.

const AVAILABLE = "(plan_credits + pack_credits - reserved_credits)";

export function isUniqueViolation(err: unknown): boolean {
  return String(err).includes("UNIQUE constraint failed");
}

/**
 * The statements that end a job's hold and charge `cost` (plan credits first, then pack),
 * never more than the hold plus what is free, never less than nothing. They belong in the
 * same D1 batch as the job's final state: the ledger entry's id (`settle:<job>`) is unique,
 * so a second settlement fails the whole batch and changes nothing.
 */
export function settlementStatements(
  db: D1Database,
  accountId: string,
  jobId: string,
  cost: number,
): D1PreparedStatement[] {
  const entryId = `settle:${jobId}`;
  const hold = `(SELECT coalesce(sum(reserved_delta), 0) FROM credit_ledger WHERE id = 'reserve:' || ?2)`;
  const charge = `max(0, min(?3, ${AVAILABLE} + ${hold}))`;
  const fromPlan = `min(max(plan_credits, 0), ${charge})`;
  return [
    db
      .prepare(
        `INSERT INTO credit_ledger
           (id, account_id, job_id, kind, plan_delta, pack_delta, reserved_delta, note)
         SELECT ?1, id, ?2, ?5, -${fromPlan}, -(${charge} - ${fromPlan}), -${hold},
                CASE WHEN ?3 > 0 THEN 'charged at completion' ELSE 'hold released' END
         FROM accounts WHERE id = ?4`,
      )
      .bind(entryId, jobId, cost, accountId, cost > 0 ? "charge" : "release"),
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

/** What a settled job was charged, from its ledger entry. */
export const CHARGED_SQL = `(SELECT -(plan_delta + pack_delta) FROM credit_ledger WHERE id = 'settle:' || ?)`;
